//===- Facts.cpp - Facts shared with the Python package -------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Facts.h"

#include "attn/Runtime/Facts.inc"

#include <nlohmann/json.hpp>

using namespace attn::runtime;

static Facts parseFacts() {
  // The file is part of the build and read by the unit tests and the Python
  // tests: a malformed one fails them, not a user's run.
  nlohmann::json json = nlohmann::json::parse(ATTN_FACTS_JSON);
  Facts facts;
  for (const nlohmann::json &entry : json.at("peak_tflops")) {
    PeakEntry peak;
    entry.at("name").get_to(peak.name);
    entry.at("compute_capability").at(0).get_to(peak.major);
    entry.at("compute_capability").at(1).get_to(peak.minor);
    entry.at("device_name_contains").get_to(peak.deviceNameContains);
    entry.at("f16").get_to(peak.f16);
    entry.at("tf32").get_to(peak.tf32);
    entry.at("f32").get_to(peak.f32);
    facts.peaks.push_back(peak);
  }
  const nlohmann::json &explain = json.at("explain");
  explain.at("low_occupancy_blocks").get_to(facts.lowOccupancyBlocks);
  explain.at("low_occupancy_warps").get_to(facts.lowOccupancyWarps);
  explain.at("coalesced_alignment_bytes").get_to(facts.coalescedAlignmentBytes);
  explain.at("shared_bytes_per_cycle").get_to(facts.sharedBytesPerCycle);
  explain.at("short_program_keys").get_to(facts.shortProgramKeys);
  explain.at("program_cost_keys").get_to(facts.programCostKeys);
  json.at("bench_warmup_ms").get_to(facts.benchWarmupMs);
  json.at("tensor_map_cache_capacity").get_to(facts.tensorMapCacheCapacity);
  json.at("cuda").get_to(facts.cuda);
  return facts;
}

const Facts &attn::runtime::getFacts() {
  static const Facts facts = parseFacts();
  return facts;
}

// A window and a softcap on the GPU: the manifest states them (the
// runner's --check reads them from there), the window's bounds are the
// key loops' limits, and the softcap's tanh is one tanh.approx.f32 per
// score; `precision = ieee` builds it from ex2.approx and an IEEE
// division.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-ptx --chip=sm_90a %s -e window_softcap -o %t/ws.ptx
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/ws.json
// RUN: FileCheck %s --check-prefix=PTX < %t/ws.ptx
// RUN: attn-translate --attn-to-ptx --chip=sm_80 %s -e ieee -o %t/ieee.ptx
// RUN: FileCheck %s --check-prefix=IEEE < %t/ieee.ptx
// RUN: FileCheck %s --check-prefix=IEEE-MANIFEST < %t/ieee.json

// MANIFEST: "attributes": {
// MANIFEST-NEXT: "scale": 0.125,
// MANIFEST-NEXT: "causal": "bottom_right",
// MANIFEST-NEXT: "precision": null,
// MANIFEST-NEXT: "window": {"left": 256, "right": 0},
// MANIFEST-NEXT: "softcap": 30.0
// MANIFEST-NEXT: },
// PTX: .entry window_softcap_kernel
// PTX: tanh.approx.f32
// PTX-NOT: .func {{.*}}__nv_tanhf

// IEEE: .entry ieee_kernel
// IEEE-NOT: tanh.approx.f32
// IEEE: ex2.approx.ftz.f32
// IEEE: div.rn.f32
// IEEE-MANIFEST: "attributes": {
// IEEE-MANIFEST-NEXT: "scale": 0.25,
// IEEE-MANIFEST-NEXT: "causal": null,
// IEEE-MANIFEST-NEXT: "precision": "ieee",
// IEEE-MANIFEST-NEXT: "window": {"left": -1, "right": 8},
// IEEE-MANIFEST-NEXT: "softcap": 20.0
// IEEE-MANIFEST-NEXT: },

func.func @window_softcap(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, window = #attn.window<left = 256, right = 0>, softcap = 30.0 : f32} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

func.func @ieee(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %o = attn.attention %q, %k, %v {precision = #attn.precision<ieee>, window = #attn.window<left = -1, right = 8>, softcap = 20.0 : f32} : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32> -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// The tensors the regions read are the kernel's arguments after the
// operands, described in "captures" (each once: doc is read twice); the
// manifest says that the kernel has regions. A constant read from above is
// cloned into the kernel.
// RUN: attn-translate --attn-to-ptx --chip=sm_90a %s -e regions -o %t/regions.ptx
// RUN: FileCheck %s --check-prefix=REGIONS < %t/regions.json
// REGIONS: "mask": null,
// REGIONS-NEXT: "captures": [
// REGIONS-NEXT: {"element_type": "f32", "shape": [8]},
// REGIONS-NEXT: {"element_type": "i64", "shape": [-1, -1]}
// REGIONS-NEXT: ],
// REGIONS: "score_mod": true,
// REGIONS-NEXT: "mask_mod": true
// REGIONS: "params": [
// REGIONS-NEXT: {"kind": "memref", "operand": "query", "rank": 4},
// REGIONS-NEXT: {"kind": "memref", "operand": "key", "rank": 4},
// REGIONS-NEXT: {"kind": "memref", "operand": "value", "rank": 4},
// REGIONS-NEXT: {"kind": "memref", "operand": "capture0", "rank": 1},
// REGIONS-NEXT: {"kind": "memref", "operand": "capture1", "rank": 2},
// REGIONS-NEXT: {"kind": "memref", "operand": "output", "rank": 4}

func.func @regions(%q: tensor<?x8x?x64xf16>, %doc: tensor<?x?xi64>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>, %slopes: tensor<8xf32>) -> tensor<?x8x?x64xf16> {
  %prefix = arith.constant 4 : index
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<8xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    attn.yield %t : f32
  } mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%b, %i] : tensor<?x?xi64>
    %dj = tensor.extract %doc[%b, %j] : tensor<?x?xi64>
    %same = arith.cmpi eq, %di, %dj : i64
    %in = arith.cmpi slt, %j, %prefix : index
    %keep = arith.ori %same, %in : i1
    attn.yield %keep : i1
  } : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// math.absi of an index and arith.remf lower on the GPU: a compare and
// select, and libdevice's __nv_fmodf (linked and inlined: no call left).
// RUN: attn-translate --attn-to-ptx --chip=sm_90a %s -e abs_rem -o %t/abs_rem.ptx
// RUN: FileCheck %s --check-prefix=ABSREM < %t/abs_rem.ptx
// ABSREM: .entry abs_rem_kernel
// ABSREM-NOT: call{{.*}}__nv_fmodf

func.func @abs_rem(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %a = math.absi %d : index
    %ai = arith.index_cast %a : index to i64
    %af = arith.sitofp %ai : i64 to f32
    %c = arith.constant 3.0 : f32
    %r = arith.remf %af, %c : f32
    %t = arith.subf %s, %r : f32
    attn.yield %t : f32
  } : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}

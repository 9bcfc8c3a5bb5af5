"""The explain report: why a kernel runs at the speed it does.

The same report as `attn-run --bench --explain` (docs/Explain.md): FLOPs,
bytes, the FLOP and HBM floors, the measured time and the fraction of the
floor reached, registers, shared memory, spills and occupancy, the kernel
config, and which known causes apply (spills, low_occupancy, uncoalesced,
no_tensor_cores, shared_memory_reads, short_programs).

The arithmetic (`compute`, `Facts` in, `Report` out) is pure Python; its
peak table and thresholds are facts.json's, which lib/Runtime/Explain.cpp
reads too, and python/tests/shared_cases.json holds reports both must give
alike. `gather` reads the facts of a loaded
kernel through the CUDA driver (attn_mlir.runtime), `explain` times it too:

    report = attn_mlir.explain.explain(kernel, q, k, v)      # runtime.Kernel
    print(report.text())
"""

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile

from .facts import CU, FACTS

# Thresholds (facts.json, shared with lib/Runtime/Explain.cpp; docs/Explain.md).
_T = FACTS["explain"]
LOW_OCCUPANCY_BLOCKS = _T["low_occupancy_blocks"]        # fewer resident blocks per SM
LOW_OCCUPANCY_WARPS = _T["low_occupancy_warps"]          # fewer resident warps per SM
ALIGNMENT_BYTES = _T["coalesced_alignment_bytes"]        # rows and base addresses
SHARED_BYTES_PER_CYCLE = _T["shared_bytes_per_cycle"]    # shared-memory bandwidth of an SM
SHORT_PROGRAM_KEYS = _T["short_program_keys"]            # fewer keys per program on average
PROGRAM_COST_KEYS = _T["program_cost_keys"]              # a program's own cost in keys' worth

ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i1": 1}


def parse_chip(chip):
    """"sm_90a" -> (9, 0, "a"); None when not of that form."""
    m = re.fullmatch(r"sm_(\d{2,4})([af]?)", chip or "")
    if not m:
        return None
    number = int(m.group(1))
    return number // 10, number % 10, m.group(2)


def peak_tflops(chip, device_name, dtype, tf32=True):
    """(TFLOP/s, note) as getPeakTflops: the first entry of facts.json's
    peak table for the chip's compute capability whose device-name part is in
    `device_name`; 0 and a note for unknown chips."""
    parsed = parse_chip(chip)
    entry = next((e for e in FACTS["peak_tflops"]
                  if parsed and list(parsed[:2]) == e["compute_capability"]
                  and e["device_name_contains"] in device_name), None)
    if entry is None:
        where = f" ({device_name})" if device_name else ""
        return 0.0, f"no peak FLOP/s known for {chip or '?'}{where}; the floor counts bytes only"
    if dtype in ("f16", "bf16"):
        value, what = entry["f16"], "dense f16/bf16 tensor cores"
    elif dtype == "f32" and tf32:
        value, what = entry["tf32"], "dense tf32 tensor cores"
    elif dtype == "f32":
        value, what = entry["f32"], "fp32 FMA"
    else:
        return 0.0, f"no peak FLOP/s for {dtype} inputs"
    return value, f"{entry['name']} {what}: {value:.1f} TFLOP/s"


@dataclasses.dataclass
class Sizes:
    B: int
    Hq: int
    Hkv: int
    Tq: int
    Tk: int
    D: int
    Dv: int


def attention_flops(s, causal):
    """2 * B * Hq * Tq * Tk * (D + Dv), halved for causal when Tq == Tk."""
    flops = 2.0 * s.B * s.Hq * s.Tq * s.Tk * (s.D + s.Dv)
    return flops / 2.0 if causal and s.Tq == s.Tk else flops


def attention_bytes(s, dtype, mask_elements=0, mask_dtype="f32"):
    """Q, K, V and O once each, plus the mask tensor as given."""
    elements = (s.B * s.Hq * s.Tq * s.D + s.B * s.Hkv * s.Tk * s.D +
                s.B * s.Hkv * s.Tk * s.Dv + s.B * s.Hq * s.Tq * s.Dv)
    return float(elements * ELEMENT_BYTES[dtype] + mask_elements * ELEMENT_BYTES[mask_dtype])


@dataclasses.dataclass
class Device:
    name: str = ""
    arch: str = ""
    multiprocessors: int = 0
    clock_khz: int = 0
    bandwidth_bytes_per_s: float = 0.0
    peak_tflops: float = 0.0
    peak_note: str = ""
    max_threads_per_sm: int = 0
    max_blocks_per_sm: int = 0
    registers_per_sm: int = 0
    shared_bytes_per_sm: int = 0


@dataclasses.dataclass
class TensorCores:
    source: str = "none"   # "sass", "ptx" or "none" (not looked)
    count: int = 0
    detail: str = ""
    warpgroup_count: int = 0   # of count: HGMMA / wgmma.mma_async


@dataclasses.dataclass
class Kernel:
    name: str = ""
    threads_per_block: int = 0
    grid_blocks: int = 0
    registers: int = 0
    local_bytes: int = 0
    static_shared_bytes: int = 0
    dynamic_shared_bytes: int = 0
    max_threads_per_block: int = 0
    active_blocks_per_sm: int = -1   # -1: estimate
    block_m: int = 0
    block_n: int = 0
    num_warps: int = 0
    num_stages: int = 0
    tensor_cores: TensorCores = dataclasses.field(default_factory=TensorCores)


@dataclasses.dataclass
class Operand:
    name: str
    sizes: tuple
    strides: tuple
    element_bytes: int
    address: int = 0


@dataclasses.dataclass
class Facts:
    sizes: Sizes
    dtype: str
    tf32: bool = False
    causal: str = None
    mask_elements: int = 0
    mask_dtype: str = "f32"
    median_ms: float = 0.0
    device: Device = dataclasses.field(default_factory=Device)
    kernel: Kernel = dataclasses.field(default_factory=Kernel)
    operands: list = dataclasses.field(default_factory=list)
    # With a mask block map: how many of its blocks the last launch put in
    # each class, indexed by the class byte (removed, zero terms, mixed,
    # triangular); () without a map.
    mask_blocks: tuple = ()
    # For kernels whose programs run a causal program's loops on a map row
    # with a triangular mask's classes (f32, two or more stages): (rows
    # with them, map rows), count_causal_rows; () otherwise.
    causal_rows: tuple = ()


def count_causal_rows(data, tq, tk, block_m, block_n, causal, offset):
    """Of a block map's rows (bytes in rows of ceil(tk / block_n) classes,
    one per query block of each mask slice): how many have exactly the
    classes of a triangular mask, key j seen from row i when j <= i +
    offset (the causal offset with `causal`, else 0), by the programs' test
    (countCausalRows): (those rows, all rows)."""
    if min(tq, tk, block_m, block_n) <= 0:
        return (0, 0)
    nj, ni = -(-tk // block_n), -(-tq // block_m)
    rows, shaped = len(data) // nj, 0
    for r in range(rows):
        row = data[r * nj:(r + 1) * nj]
        row0 = (r % ni) * block_m
        last_row = row0 + min(block_m, tq - row0) - 1
        visit = min(max((last_row + offset) // block_n + 1, 0), nj)
        count = visit if causal else nj
        first, last, zero_end, triangular = count, 0, count, 0
        for kb in range(count):
            cls = row[kb]
            if cls != 0:
                first, last = min(first, kb), kb + 1
            if first <= kb and zero_end == count and cls != 1:
                zero_end = kb
            triangular += cls == 3
        below = min(max((row0 + offset + 1) // block_n, 0), tk // block_n, visit)
        shaped += (first == 0 and last == visit and zero_end == below
                   and triangular == last - zero_end and visit > 0)
    return (shaped, rows)


def count_mask_blocks(data):
    """The class counts of a block map's bytes (countMaskBlocks): classes
    0-3, a byte outside them counted as mixed."""
    counts = [0, 0, 0, 0]
    for byte in data:
        counts[byte if byte < 4 else 2] += 1
    return tuple(counts)


@dataclasses.dataclass
class Report:
    facts: Facts
    flops: float
    bytes: float
    flop_floor_ms: float
    hbm_floor_ms: float
    floor_ms: float
    median_ms: float
    fraction_of_floor: float
    tflops: float
    bytes_per_s: float
    bound: str
    blocks_per_sm: int
    occupancy_source: str
    warps_per_sm: int
    max_warps_per_sm: int
    occupancy: float
    waves: float
    causes: list   # [(name, detail)]

    @property
    def cause_names(self):
        return [name for name, _ in self.causes]

    def lines(self):
        return format_lines(self)

    def text(self):
        return "".join(line + "\n" for line in self.lines())


def estimate_blocks_per_sm(device, kernel):
    """Resident blocks per SM from the limits (estimateBlocksPerSM)."""
    if kernel.threads_per_block <= 0:
        return 0
    warps = (kernel.threads_per_block + 31) // 32
    blocks = device.max_blocks_per_sm if device.max_blocks_per_sm > 0 else 32
    if device.max_threads_per_sm > 0:
        blocks = min(blocks, device.max_threads_per_sm // (warps * 32))
    if device.registers_per_sm > 0 and kernel.registers > 0:
        per_warp = (kernel.registers * 32 + 255) // 256 * 256
        blocks = min(blocks, device.registers_per_sm // per_warp // warps)
    if device.shared_bytes_per_sm > 0:
        per_block = kernel.static_shared_bytes + kernel.dynamic_shared_bytes + 1024
        blocks = min(blocks, device.shared_bytes_per_sm // per_block)
    return max(blocks, 0)


def _count_word(text, word):
    return len(re.findall(r"(?<![A-Za-z0-9_.])" + re.escape(word), text))


def count_tensor_core_instructions(text, sass):
    """HMMA/HGMMA in SASS, mma.sync/wgmma.mma_async in PTX."""
    if sass:
        return _count_word(text, "HMMA") + _count_word(text, "HGMMA")
    return _count_word(text, "mma.sync") + _count_word(text, "wgmma.mma_async")


def find_uncoalesced(operands):
    """Operands that 16-byte vector loads cannot read, as "k (why)"."""
    found = []
    for op in operands:
        rank = len(op.sizes)
        if rank == 0 or len(op.strides) != rank:
            continue
        why = None
        if op.strides[-1] != 1 and op.sizes[-1] > 1:
            why = f"innermost stride {op.strides[-1]}"
        elif (rank >= 2 and op.sizes[-2] > 1 and op.strides[-2] != 0
              and (op.strides[-2] * op.element_bytes) % ALIGNMENT_BYTES):
            why = f"row pitch {op.strides[-2] * op.element_bytes} bytes"
        elif op.address % ALIGNMENT_BYTES:
            why = "base address not 16-byte aligned"
        if why:
            found.append(f"{op.name} ({why})")
    return found


def _expects_tensor_cores(facts):
    return facts.dtype in ("f16", "bf16") or (facts.dtype == "f32" and facts.tf32)


def shared_memory_reads(facts):
    """The shared_memory_reads cause (modelSharedMemoryReads), or None: per
    program and key block, the bytes the MMAs read of K and V in shared
    memory (every warp reads both tiles with mma.sync, every warpgroup with
    wgmma) and the copy writes, at SHARED_BYTES_PER_CYCLE, against the
    block's FLOPs at the peak."""
    d, k = facts.device, facts.kernel
    tc = k.tensor_cores
    if (not _expects_tensor_cores(facts) or tc.count == 0 or k.block_m <= 0 or k.block_n <= 0
            or k.num_warps <= 0 or d.multiprocessors <= 0 or d.clock_khz <= 0
            or d.peak_tflops <= 0):
        return None
    warpgroups = tc.warpgroup_count > 0
    readers = max(1, k.num_warps // 4) if warpgroups else k.num_warps
    tile = float(k.block_n) * (facts.sizes.D + facts.sizes.Dv) * ELEMENT_BYTES[facts.dtype]
    read, written = readers * tile, tile
    shared_cycles = (read + written) / SHARED_BYTES_PER_CYCLE
    flops = 2.0 * k.block_m * k.block_n * (facts.sizes.D + facts.sizes.Dv)
    tensor_cycles = flops / (d.peak_tflops * 1e12 / (d.multiprocessors * d.clock_khz * 1e3))
    if shared_cycles <= tensor_cycles:
        return None
    who = "each warpgroup" if warpgroups else "each warp"
    return ("shared_memory_reads",
            f"{who} reads all of K and V from shared memory: {read / 1024:.1f} KiB read and "
            f"{written / 1024:.1f} KiB written per program and key block, "
            f"{int(shared_cycles + 0.5)} cycles at 128 B per cycle and SM against "
            f"{int(tensor_cycles + 0.5)} cycles of its FLOPs at the peak")


def short_programs(facts):
    """The short_programs cause (modelShortPrograms), or None: the keys a
    program visits on average (whole key blocks: all of them, those under
    the causal bound of its last row, or those its mask block map row does
    not remove), against SHORT_PROGRAM_KEYS, and the share PROGRAM_COST_KEYS
    takes of a program."""
    s, bm, bn = facts.sizes, facts.kernel.block_m, facts.kernel.block_n
    if bm <= 0 or bn <= 0 or s.Tq <= 0 or s.Tk <= 0:
        return None
    query_blocks, key_blocks = -(-s.Tq // bm), -(-s.Tk // bn)
    blocks = float(key_blocks)
    if len(facts.mask_blocks) == 4:
        total = sum(facts.mask_blocks)
        if total <= 0:
            return None
        blocks = key_blocks * (total - facts.mask_blocks[0]) / total
    elif facts.causal is not None:
        offset = s.Tk - s.Tq if facts.causal == "bottom_right" else 0
        visited = 0
        for x in range(query_blocks):
            last_row = min((x + 1) * bm, s.Tq) - 1
            keys = min(max(last_row + offset + 1, 0), s.Tk)
            visited += -(-keys // bn)
        blocks = visited / query_blocks
    keys = blocks * bn
    if keys >= SHORT_PROGRAM_KEYS:
        return None
    share = PROGRAM_COST_KEYS / (PROGRAM_COST_KEYS + keys)
    return ("short_programs",
            f"{int(keys + 0.5)} keys per program on average ({blocks:.1f} key blocks of {bn}), "
            f"under {SHORT_PROGRAM_KEYS}: what a program costs besides its key blocks (its first "
            f"loads landing, the epilogue, the next launch; about {int(PROGRAM_COST_KEYS)} keys' "
            f"worth on the H200) is about {int(share * 100 + 0.5)}% of the time")


def compute(facts):
    """The report of `facts` (computeExplain)."""
    d, k = facts.device, facts.kernel
    flops = attention_flops(facts.sizes, facts.causal)
    nbytes = attention_bytes(facts.sizes, facts.dtype, facts.mask_elements, facts.mask_dtype)
    flop_floor = flops / (d.peak_tflops * 1e12) * 1e3 if d.peak_tflops > 0 else 0.0
    hbm_floor = nbytes / d.bandwidth_bytes_per_s * 1e3 if d.bandwidth_bytes_per_s > 0 else 0.0
    floor = max(flop_floor, hbm_floor)
    median = facts.median_ms
    fraction = floor / median if median > 0 else 0.0
    tflops = flops / (median * 1e-3) / 1e12 if median > 0 else 0.0
    bps = nbytes / (median * 1e-3) if median > 0 else 0.0
    if k.active_blocks_per_sm >= 0:
        blocks, source = k.active_blocks_per_sm, "driver"
    else:
        blocks, source = estimate_blocks_per_sm(d, k), "estimate"
    warps = blocks * ((k.threads_per_block + 31) // 32)
    max_warps = d.max_threads_per_sm // 32
    occupancy = warps / max_warps if max_warps > 0 else 0.0
    waves = k.grid_blocks / (d.multiprocessors * blocks) if d.multiprocessors > 0 and blocks > 0 else 0.0

    causes = []
    if k.local_bytes > 0:
        causes.append(("spills", f"{k.local_bytes} bytes of local memory per thread "
                                 f"({k.registers} registers)"))
    if blocks < LOW_OCCUPANCY_BLOCKS or warps < LOW_OCCUPANCY_WARPS:
        causes.append(("low_occupancy", f"{blocks} blocks, {warps} warps per SM (under "
                                        f"{LOW_OCCUPANCY_BLOCKS} blocks or {LOW_OCCUPANCY_WARPS} warps)"))
    uncoalesced = find_uncoalesced(facts.operands)
    if uncoalesced:
        causes.append(("uncoalesced", ", ".join(uncoalesced)))
    tc = k.tensor_cores
    if _expects_tensor_cores(facts) and tc.source != "none" and tc.count == 0:
        where = "no HMMA/HGMMA in the SASS" if tc.source == "sass" else "no mma.sync/wgmma in the PTX"
        causes.append(("no_tensor_cores", f"{where} ({tc.detail})"))
    shared = shared_memory_reads(facts)
    if shared:
        causes.append(shared)
    short = short_programs(facts)
    if short:
        causes.append(short)
    return Report(facts, flops, nbytes, flop_floor, hbm_floor, floor, median, fraction, tflops,
                  bps, "compute" if flop_floor >= hbm_floor else "memory", blocks, source, warps,
                  max_warps, occupancy, waves, causes)


def _g(x):
    """C's %.4g."""
    return "%.4g" % x


def format_lines(r):
    """The "explain: key=value" lines of formatExplainLines (without the
    newlines); the last is "explain: causes=..."."""
    f, d, k, s = r.facts, r.facts.device, r.facts.kernel, r.facts.sizes
    precision = (" tf32" if f.tf32 else " ieee") if f.dtype == "f32" else ""
    mask = f"{f.mask_dtype}[{f.mask_elements}]" if f.mask_elements else "none"
    tc = k.tensor_cores
    if tc.source == "none":
        cores = "unknown"
    else:
        where = " HMMA/HGMMA in the SASS; " if tc.source == "sass" else " mma.sync/wgmma in the PTX; "
        cores = f"{'yes' if tc.count else 'no'} ({tc.count}{where}{tc.detail})"
    pairs = [
        ("device", f"{d.name} ({d.arch}, {d.multiprocessors} SMs, {d.clock_khz // 1000} MHz, "
                   f"{d.bandwidth_bytes_per_s * 1e-12:.2f} TB/s, {d.peak_tflops:.1f} TFLOP/s peak: "
                   f"{d.peak_note})"),
        ("problem", f"B={s.B} Hq={s.Hq} Hkv={s.Hkv} Tq={s.Tq} Tk={s.Tk} D={s.D} Dv={s.Dv} "
                    f"{f.dtype}{precision} causal={f.causal or 'none'} mask={mask}"),
        ("flops", _g(r.flops)),
        ("bytes", _g(r.bytes)),
        ("flop_floor_ms", _g(r.flop_floor_ms)),
        ("hbm_floor_ms", _g(r.hbm_floor_ms)),
        ("floor_ms", f"{_g(r.floor_ms)} ({r.bound} bound)"),
        ("median_ms", _g(r.median_ms)),
        ("fraction_of_floor", f"{r.fraction_of_floor:.3f}"),
        ("tflops", f"{r.tflops:.1f}"),
        ("hbm_gbps", f"{r.bytes_per_s * 1e-9:.0f}"),
        ("config", f"block_m={k.block_m} block_n={k.block_n} num_warps={k.num_warps} "
                   f"num_stages={k.num_stages}"),
        ("launch", f"grid={k.grid_blocks} blocks x {k.threads_per_block} threads, waves={r.waves:.2f}"),
        ("registers", str(k.registers)),
        ("shared_bytes", f"{k.static_shared_bytes} static + {k.dynamic_shared_bytes} dynamic"),
        ("local_bytes", str(k.local_bytes)),
        ("occupancy", f"{r.blocks_per_sm} blocks/SM, {r.warps_per_sm}/{r.max_warps_per_sm} "
                      f"warps/SM = {r.occupancy:.3f} ({r.occupancy_source})"),
        ("tensor_cores", cores),
    ]
    if len(f.mask_blocks) == 4:
        n = f.mask_blocks
        pairs.insert(2, ("mask_blocks", f"{n[0]} removed, {n[1]} zero, {n[3]} triangular, "
                                        f"{n[2]} mixed (of {sum(n)})"))
        if len(f.causal_rows) == 2:
            pairs.insert(3, ("causal_rows",
                             f"{f.causal_rows[0]} of {f.causal_rows[1]} map rows have a "
                             "triangular mask's classes (their programs run as causal ones)"))
    pairs += [("cause." + name, detail) for name, detail in r.causes]
    pairs.append(("causes", ",".join(r.cause_names) or "none"))
    return [f"explain: {key}={value}" for key, value in pairs]


def to_json(r):
    """The "explain" object of attn-run --json (explainToJson)."""
    d, k = r.facts.device, r.facts.kernel
    blocks = r.facts.mask_blocks
    extra = ({"mask_blocks": dict(mixed=blocks[2], removed=blocks[0], triangular=blocks[3],
                                  zero=blocks[1])} if len(blocks) == 4 else {})
    if len(r.facts.causal_rows) == 2:
        extra["causal_rows"] = dict(causal=r.facts.causal_rows[0], rows=r.facts.causal_rows[1])
    return {
        **extra,
        "bound": r.bound, "bytes": r.bytes, "causes": r.cause_names,
        "cause_details": dict(r.causes),
        "config": dict(block_m=k.block_m, block_n=k.block_n, num_stages=k.num_stages,
                       num_warps=k.num_warps),
        "device": dict(arch=d.arch, bandwidth_bytes_per_s=d.bandwidth_bytes_per_s,
                       clock_khz=d.clock_khz, multiprocessors=d.multiprocessors, name=d.name,
                       peak_note=d.peak_note, peak_tflops=d.peak_tflops),
        "dynamic_shared_bytes": k.dynamic_shared_bytes, "flop_floor_ms": r.flop_floor_ms,
        "floor_ms": r.floor_ms, "flops": r.flops, "fraction_of_floor": r.fraction_of_floor,
        "grid_blocks": k.grid_blocks, "hbm_floor_ms": r.hbm_floor_ms,
        "local_bytes": k.local_bytes, "max_warps_per_sm": r.max_warps_per_sm,
        "median_ms": r.median_ms, "occupancy": r.occupancy,
        "occupancy_blocks_per_sm": r.blocks_per_sm, "occupancy_source": r.occupancy_source,
        "registers": k.registers, "static_shared_bytes": k.static_shared_bytes,
        "tensor_core_instructions": k.tensor_cores.count,
        "tensor_core_source": k.tensor_cores.source, "tensor_core_detail": k.tensor_cores.detail,
        "tflops": r.tflops, "threads_per_block": k.threads_per_block,
        "warps_per_sm": r.warps_per_sm, "waves": r.waves,
    }


# ---------------------------------------------------------------------------
# Gathering the facts on a GPU
# ---------------------------------------------------------------------------

def find_cuda_tool(tool):
    """`tool` on PATH, else in $CUDA_HOME/bin or /usr/local/cuda/bin."""
    found = shutil.which(tool)
    if found:
        return found
    for directory in (os.path.join(os.environ.get("CUDA_HOME", ""), "bin"), "/usr/local/cuda/bin"):
        candidate = os.path.join(directory, tool)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def find_tensor_cores(ptx, chip):
    """TensorCores from the SASS (ptxas + cuobjdump -sass) when both tools
    are found, else from the PTX, saying why (findTensorCores)."""
    if isinstance(ptx, bytes):
        ptx = ptx.decode()
    evidence = TensorCores("ptx", count_tensor_core_instructions(ptx, sass=False), "",
                           _count_word(ptx, "wgmma.mma_async"))
    ptxas, cuobjdump = find_cuda_tool("ptxas"), find_cuda_tool("cuobjdump")
    if not ptxas or not cuobjdump:
        evidence.detail = f"{'ptxas' if not ptxas else 'cuobjdump'} not found"
        return evidence
    with tempfile.TemporaryDirectory(prefix="attn-explain-") as tmp:
        src, cubin = os.path.join(tmp, "kernel.ptx"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        proc = subprocess.run([ptxas, f"-arch={chip}", "-o", cubin, src],
                              capture_output=True, text=True)
        if proc.returncode:
            first = (proc.stderr or proc.stdout or "no output").splitlines()[0]
            evidence.detail = f"ptxas failed ({first})"
            return evidence
        proc = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True)
        if proc.returncode:
            first = (proc.stderr or proc.stdout or "no output").splitlines()[0]
            evidence.detail = f"cuobjdump -sass failed ({first})"
            return evidence
        return TensorCores("sass", count_tensor_core_instructions(proc.stdout, sass=True),
                           f"cuobjdump -sass of ptxas -arch={chip}",
                           _count_word(proc.stdout, "HGMMA"))


_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "bool": "i1"}


def _dtype_name(t):
    return _DTYPE_NAMES[str(t.dtype).replace("torch.", "")]


def gather(kernel, q, k, v, mask=None, out=None, median_ms=0.0):
    """The Facts of `kernel` (an attn_mlir.runtime.Kernel) launched on these
    CUDA tensors, through the driver: cuDeviceGetAttribute,
    cuFuncGetAttribute, cuOccupancyMaxActiveBlocksPerMultiprocessor."""
    from . import runtime

    m = kernel.manifest
    shapes = m.check_shapes(dict(query=q.shape, key=k.shape, value=v.shape))
    sizes = Sizes(**{name: int(shapes[name]) for name in ("B", "Hq", "Hkv", "Tq", "Tk", "D", "Dv")})
    dtype = m.element_type
    precision = m.attributes.get("precision")
    tf32 = dtype == "f32" and precision != "ieee"
    ordinal = q.device.index or 0
    attr = lambda a: runtime.device_attribute(ordinal, CU["CU_DEVICE_ATTRIBUTE_" + a])  # noqa: E731
    cc = (attr("COMPUTE_CAPABILITY_MAJOR"),
          attr("COMPUTE_CAPABILITY_MINOR"))
    name = runtime.device_name(ordinal)
    arch = f"sm_{cc[0]}{cc[1]}"
    peak, note = peak_tflops(arch, name, dtype, tf32)
    device = Device(
        name=name, arch=arch,
        multiprocessors=attr("MULTIPROCESSOR_COUNT"),
        clock_khz=attr("CLOCK_RATE"),
        bandwidth_bytes_per_s=2.0 * attr("MEMORY_CLOCK_RATE") * 1000.0
        * attr("GLOBAL_MEMORY_BUS_WIDTH") / 8.0,
        peak_tflops=peak, peak_note=note,
        max_threads_per_sm=attr("MAX_THREADS_PER_MULTIPROCESSOR"),
        max_blocks_per_sm=attr("MAX_BLOCKS_PER_MULTIPROCESSOR"),
        registers_per_sm=attr("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        shared_bytes_per_sm=attr("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"))
    threads = m.block[0] * m.block[1] * m.block[2]
    gx, gy, gz = m.grid_for(shapes)
    with open(m.ptx_path) as f:
        ptx = f.read()
    fa = lambda a: kernel.function_attribute(CU["CU_FUNC_ATTRIBUTE_" + a])  # noqa: E731
    info = Kernel(
        name=m.kernel, threads_per_block=threads, grid_blocks=gx * gy * gz,
        registers=fa("NUM_REGS"),
        local_bytes=fa("LOCAL_SIZE_BYTES"),
        static_shared_bytes=fa("SHARED_SIZE_BYTES"),
        dynamic_shared_bytes=m.shared_memory_bytes,
        max_threads_per_block=fa("MAX_THREADS_PER_BLOCK"),
        active_blocks_per_sm=kernel.max_active_blocks_per_sm(),
        block_m=m.config.get("block_m", 0), block_n=m.config.get("block_n", 0),
        num_warps=m.config.get("num_warps", 0), num_stages=m.config.get("num_stages", 0),
        tensor_cores=find_tensor_cores(ptx, m.data.get("chip", arch)))
    operands = []
    for label, t in (("q", q), ("k", k), ("v", v), ("mask", mask), ("o", out)):
        if t is None:
            continue
        strides = tuple(0 if (label == "mask" and n == 1) else st
                        for n, st in zip(t.shape, t.stride()))
        operands.append(Operand(label, tuple(t.shape), strides, t.element_size(), t.data_ptr()))
    mask_elements = 0
    if mask is not None:
        mask_elements = 1
        for n in mask.shape:
            mask_elements *= n
    mask_blocks, causal_rows = (), ()
    if "mask_block_map" in m.workspaces:
        # The map the last call on this stream wrote.
        nbytes = m.workspace_bytes("mask_block_map", shapes)
        held = kernel.workspace("mask_block_map", q.device)
        if held is None or held.numel() < nbytes:
            raise RuntimeError("explain: no launch of these sizes wrote the mask block map")
        data = held[:nbytes].cpu().tolist()
        mask_blocks = count_mask_blocks(data)
        # f32 programs with two or more stages run a causal program's loops
        # on rows with a triangular mask's classes (docs/GPU.md).
        if m.element_type == "f32" and m.config.get("num_stages", 1) > 1:
            causal = m.attributes.get("causal")
            causal_rows = count_causal_rows(
                data, sizes.Tq, sizes.Tk, m.config["block_m"], m.config["block_n"],
                causal is not None, sizes.Tk - sizes.Tq if causal == "bottom_right" else 0)
    return Facts(sizes, dtype, tf32, m.attributes.get("causal"), mask_elements,
                 _dtype_name(mask) if mask is not None else "f32", median_ms, device, info,
                 operands, mask_blocks, causal_rows)


WARMUP_MS = FACTS["bench_warmup_ms"]


def warm_up(fn, calls=10, min_ms=WARMUP_MS):
    """Calls fn() at least `calls` times and until `min_ms` of wall time
    passed with the GPU busy, then synchronizes. An idle H200 boosts to
    1980 MHz for the first tens of milliseconds of a heavy kernel, then
    reaches its 700 W cap and settles at 1600-1830 MHz, where a sustained
    workload runs: timing inside the boost flattered the seed's causal
    kernel by 8% (bench/results/2026-12-01-h200-power-cap.log). attn-run's
    --bench warms up the same way."""
    import time

    import torch

    start = time.perf_counter()
    done = 0
    while done < calls or (time.perf_counter() - start) * 1e3 < min_ms:
        fn()
        done += 1
        if done >= calls:  # from here on, wall time is GPU time
            torch.cuda.synchronize()
    torch.cuda.synchronize()


def time_kernel(fn, reps=30, warmup=10):
    """The median of `reps` CUDA-event timings of fn(), in ms, after
    warm_up(fn, warmup)."""
    import torch

    warm_up(fn, warmup)
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]


def explain(kernel, q, k, v, mask=None, median_ms=None, out=None):
    """The Report of `kernel` (attn_mlir.runtime.Kernel) on these tensors;
    times it (time_kernel: median of 30 after warm_up) unless `median_ms` is given
    (then it runs once if the kernel has a mask block map, whose classes
    the report counts)."""
    import torch

    if out is None:
        out = torch.empty(q.shape[0], q.shape[1], q.shape[2], v.shape[3], dtype=q.dtype,
                          device=q.device)
    if median_ms is None:
        median_ms = time_kernel(lambda: kernel(q, k, v, mask, out=out))
    elif "mask_block_map" in kernel.manifest.workspaces:
        kernel(q, k, v, mask, out=out)  # the block map gather reads
    return compute(gather(kernel, q, k, v, mask, out, median_ms))

"""Attention test cases for attn-run: MLIR functions, inputs and masks.

Shared by the CPU random sweep (CPU/sweep.py) and, later, the CUDA one.
A case is a dict; `write_case` turns it into an .mlir file plus .npy inputs
(masks with -inf and fully masked rows, a NaN row), and `attn_run_args` into
the attn-run command line. Everything is reproducible from the case alone.
A case with "lse" returns the op's log-sum-exp too (SPEC.md section 1.2),
which attn-run --check checks with the output. A case with "split" compiles
with --split-programs (split-KV: its Tq is static, "static_tq", and small,
so that the keys are split over programs and a combine merges them); one
with "kv_lengths" passes per-batch key counts (FlashAttention's
cache_seqlens: lengths in 0..Tk, with a full and an empty cache where the
batch allows) from an .npy file. One with "varlen" = N packs N sequences
along Tq and Tk (cu_seqlens, FlashAttention's varlen; batch 1): random
lengths with an empty sequence, sometimes the same for queries and keys,
sometimes with query rows before the first and after the last sequence.
One with "page" = p reads K and V from a paged cache (block_table): pools
of B * P + 3 pages of p keys, Tk = P * p, the table a random permutation of
the pool's pages (so that a wrong page fails the check).
"""

import os

import numpy as np

DTYPES = ["f32-tf32", "f32-ieee", "f16", "bf16"]
# 40, 59 and 72: head dims the GPU kernels pad to whole 16-element chunks
# (59: rows that are not whole 16-byte vectors, copied in narrower ones).
HEAD_DIMS = [16, 40, 59, 64, 72, 80, 128, 256]
SEQ_LENS = [1, 2, 17, 63, 64, 65, 127, 129, 1000]
CAUSAL = [None, "top_left", "bottom_right"]
MASKS = [None, "float2", "float4", "bool2", "bool4"]


def random_case(rng, index, max_work=3e7):
    """Draws one case from the matrix axes, bounded in work for a CPU run."""
    while True:
        dtype = rng.choice(DTYPES)
        d = rng.choice(HEAD_DIMS)
        dv = d if rng.random() < 0.8 else rng.choice(HEAD_DIMS)
        tq = rng.choice(SEQ_LENS)
        tk = tq if rng.random() < 0.3 else rng.choice(SEQ_LENS)
        hkv = rng.choice([1, 2])
        group = rng.choice([1, 2, 4])
        b = rng.choice([1, 2])
        work = b * hkv * group * tq * tk * (d + dv)
        if work <= max_work:
            break
    case = dict(
        name=f"case{index}", dtype=dtype, d=d, dv=dv, tq=tq, tk=tk, b=b,
        hkv=hkv, hq=hkv * group, causal=rng.choice(CAUSAL),
        mask=rng.choice(MASKS), dynamic=rng.random() < 0.7,
        nan_row=rng.random() < 0.1,
        block=rng.choice([None, None, (16, 8), (64, 32), (8, 16)]),
        seed=rng.randrange(1 << 30))
    # K/V pipeline stages of --attn-pipeline (None: the config's).
    case["stages"] = rng.choice([None, None, 2, 3, 4])
    case["lse"] = has_lse(case)
    add_serving_axes(case)
    # f32 K/V slots of head dim 256 fit 227 KiB of shared memory twice only.
    if dtype.startswith("f32") and max(d, dv) > 128 and case["stages"]:
        case["stages"] = 2
    # Rows that are not whole 16-byte vectors keep the one stage their GPU
    # kernels take (docs/GPU.md, "Padded head dims").
    if narrow_rows(case):
        case["stages"] = None
    return case


def narrow_rows(case):
    """Whether a head dim's rows are not whole 16-byte vectors, which the
    GPU kernels copy in narrower vectors with one stage."""
    size = 4 if case["dtype"].startswith("f32") else 2
    return (case["d"] * size) % 16 != 0 or (case["dv"] * size) % 16 != 0


def has_lse(case):
    """Whether a random case returns the log-sum-exp too: about one in four,
    from bits of the case's seed that nothing else reads (so the other
    draws, and the cases of a seed, are those of before)."""
    return (case["seed"] >> 8) % 4 == 0


# Split-KV: the --split-programs values and the static query lengths of the
# split cases (one query block: decode and speculative decode).
SPLIT_PROGRAMS = [1, 8, 64, 264]
SPLIT_TQ = [1, 2, 3, 5, 8, 16]


def add_serving_axes(case):
    """Split-KV in about one case in six (a static Tq of 1..16 and a
    --split-programs value) and kv_lengths in about one in five, from bits of
    the case's seed that nothing else reads (as has_lse), so that the other
    draws of a seed stay as they were."""
    seed = case["seed"]
    case["split"] = None
    if (seed >> 12) % 6 == 0:
        case["split"] = SPLIT_PROGRAMS[(seed >> 15) % len(SPLIT_PROGRAMS)]
        case["tq"] = SPLIT_TQ[(seed >> 17) % len(SPLIT_TQ)]
        case["static_tq"] = True
    case["kv_lengths"] = (seed >> 20) % 5 == 0
    case["varlen"] = None
    if (seed >> 23) % 6 == 0 and not case["split"] and not case["kv_lengths"] \
            and case.get("mask") is None:
        case["varlen"] = VARLEN_SEQS[(seed >> 26) % len(VARLEN_SEQS)]
        case["b"] = 1
    add_paged_axis(case)


# A paged KV cache: the page sizes of random paged cases (the GPU's take
# powers of two in 16..256).
PAGES = [16, 64]


def add_paged_axis(case):
    """A paged cache in about one case in five without packed sequences,
    from bits of the seed that nothing else reads: Tk rounded up to whole
    pages."""
    seed = case["seed"]
    case["page"] = None
    if (seed >> 3) % 5 == 0 and not case.get("varlen"):
        case["page"] = PAGES[(seed >> 5) % len(PAGES)]
        case["tk"] = -(-case["tk"] // case["page"]) * case["page"]


def paged_sizes(case):
    """(P, NP): pages per sequence and pages in the pool."""
    pages = case["tk"] // case["page"]
    return pages, case["b"] * pages + 3


def block_table_array(case):
    """The case's block table (int32, B x P): distinct pages of the pool in
    random order, from their own stream of the seed."""
    pages, pool = paged_sizes(case)
    rng = np.random.default_rng([case["seed"], 44])
    order = rng.permutation(pool)[:case["b"] * pages]
    return order.reshape(case["b"], pages).astype(np.int32)


# Packed sequences: the sequence counts of random varlen cases.
VARLEN_SEQS = [1, 2, 3, 5, 8]


def varlen_arrays(case):
    """The case's cu_seqlens_q and cu_seqlens_k (int32, N + 1 each): random
    lengths summing to Tq and Tk, one sequence empty from three on; the
    keys' the queries' when "varlen_same" (and Tq = Tk); with "varlen_gap",
    query rows before the first sequence and after the last (zero rows, lse
    -inf). From their own stream of the seed."""
    n, tq, tk = case["varlen"], case["tq"], case["tk"]
    rng = np.random.default_rng([case["seed"], 43])

    def offsets(total):
        cuts = np.sort(rng.integers(0, total + 1, size=n - 1))
        if n >= 3:
            at = int(rng.integers(n - 2))
            cuts[at + 1] = cuts[at]
        return np.concatenate([[0], cuts, [total]]).astype(np.int64)

    cu_q = offsets(tq)
    cu_k = cu_q.copy() if case.get("varlen_same") and tq == tk else offsets(tk)
    if case.get("varlen_gap") and tq >= 8:
        cu_q = cu_q * (tq - 5) // tq + 2
    return cu_q.astype(np.int32), cu_k.astype(np.int32)


def kv_lengths_array(case):
    """The case's per-batch key counts (int32, B): uniform in 0..Tk, one
    batch the whole cache and, from three batches on, one without keys; from
    their own stream of the seed."""
    b, tk = case["b"], case["tk"]
    rng = np.random.default_rng([case["seed"], 42])
    lengths = rng.integers(0, tk + 1, size=b)
    if b >= 2:
        full = int(rng.integers(b))
        lengths[full] = tk
        if b >= 3 or case["seed"] % 2:
            lengths[(full + 1 + int(rng.integers(b - 1))) % b] = 0
    return lengths.astype(np.int32)


# The variants of SPEC.md section 1.1 (the variant sweep): windows
# (left, right; -1 unbounded), softcaps, score_mods and mask_mods, each
# written as the region below.
WINDOWS_LEFT = [-1, 0, 1, 5, 16, 40, 129, 500]
WINDOWS_RIGHT = [-1, 0, 2, 16, 64]
SOFTCAPS = [0.5, 2.0, 20.0]
SCORE_MODS = ["alibi", "neg_inf", "branchy"]
MASK_MODS = ["document", "document_i64", "prefix_lm", "chunked", "dilated"]


def random_variant_case(rng, index, max_work=1e7):
    """A random case (random_case's axes) with at least one variant: a
    window, a softcap, a score_mod and a mask_mod, each with some
    probability; masks tensors stay in about half of them."""
    case = random_case(rng, index, max_work)
    case["name"] = f"variant{index}"
    if rng.random() < 0.5:
        case["mask"] = None
    while True:
        case["window"] = ((rng.choice(WINDOWS_LEFT), rng.choice(WINDOWS_RIGHT))
                          if rng.random() < 0.5 else None)
        case["softcap"] = rng.choice(SOFTCAPS) if rng.random() < 0.35 else None
        case["score_mod"] = rng.choice(SCORE_MODS) if rng.random() < 0.4 else None
        case["mask_mod"] = rng.choice(MASK_MODS) if rng.random() < 0.4 else None
        if any(case[k] for k in VARIANT_KEYS):
            return case


VARIANT_KEYS = ("window", "softcap", "score_mod", "mask_mod")


def _score_mod_region(case, slopes_type):
    body = {
        # ALiBi: s + slopes[h] * (j - i).
        "alibi": f"""
      %slope = tensor.extract %slopes[%h] : {slopes_type}
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %bias = arith.mulf %slope, %df : f32
      %t = arith.addf %s, %bias : f32""",
        # -inf for keys with (i + 2j) % 5 == 0 and for whole rows i % 11 == 3
        # (kept keys whose final score is -inf count as masked).
        "neg_inf": """
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c5 = arith.constant 5 : index
      %c11 = arith.constant 11 : index
      %j2 = arith.muli %j, %c2 : index
      %sum = arith.addi %i, %j2 : index
      %r = arith.remui %sum, %c5 : index
      %key = arith.cmpi eq, %r, %c0 : index
      %ri = arith.remui %i, %c11 : index
      %row = arith.cmpi eq, %ri, %c3 : index
      %drop = arith.ori %key, %row : i1
      %ninf = arith.constant 0xFF800000 : f32
      %t = arith.select %drop, %ninf, %s : f32""",
        # s > 0 ? 2 tanh(s) : s * (1 + h / 4), through scf.if.
        "branchy": """
      %zero = arith.constant 0.0 : f32
      %pos = arith.cmpf ogt, %s, %zero : f32
      %t = scf.if %pos -> f32 {
        %th = math.tanh %s : f32
        %two = arith.constant 2.0 : f32
        %y = arith.mulf %th, %two : f32
        scf.yield %y : f32
      } else {
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %quarter = arith.constant 0.25 : f32
        %one = arith.constant 1.0 : f32
        %f = math.fma %hf, %quarter, %one : f32
        %y = arith.mulf %s, %f : f32
        scf.yield %y : f32
      }""",
    }[case["score_mod"]]
    return ("score_mod {\n    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):"
            + body + "\n      attn.yield %t : f32\n    }")


def _mask_mod_region(case, doc_type):
    doc_elt = doc_type.split("x")[-1][:-1] if doc_type else None
    body = {
        # Packed sequences: the same document id.
        "document": f"""
      %di = tensor.extract %doc[%b, %i] : {doc_type}
      %dj = tensor.extract %doc[%b, %j] : {doc_type}
      %keep = arith.cmpi eq, %di, %dj : {doc_elt}""",
        # Prefix-LM: the first `prefix` keys for every row, causal after.
        "prefix_lm": """
      %in = arith.cmpi slt, %j, %prefix : index
      %seen = arith.cmpi sle, %j, %i : index
      %keep = arith.ori %in, %seen : i1""",
        # Chunked attention: chunks of 24 rows and keys.
        "chunked": """
      %c24 = arith.constant 24 : index
      %ci = arith.floordivsi %i, %c24 : index
      %cj = arith.floordivsi %j, %c24 : index
      %keep = arith.cmpi eq, %ci, %cj : index""",
        # Dilated: every third key around the row.
        "dilated": """
      %d = arith.subi %j, %i : index
      %c3 = arith.constant 3 : index
      %r = arith.remsi %d, %c3 : index
      %c0 = arith.constant 0 : index
      %keep = arith.cmpi eq, %r, %c0 : index""",
    }[case["mask_mod"].replace("_i64", "")]
    return ("mask_mod {\n    ^bb0(%b: index, %h: index, %i: index, %j: index):"
            + body + "\n      attn.yield %keep : i1\n    }")


def captures(case):
    """The extra arguments the regions read, in order: (name, shape, elt)."""
    out = []
    if case.get("score_mod") == "alibi":
        out.append(("slopes", [case["hq"]], "f32"))
    if (case.get("mask_mod") or "").startswith("document"):
        elt = "i64" if case["mask_mod"].endswith("i64") else "i32"
        # Under varlen the regions' b is the sequence.
        rows = case["varlen"] if case.get("varlen") else case["b"]
        out.append(("doc", [rows, max(case["tq"], case["tk"])], elt))
    return out


def _elt(case):
    return case["dtype"].split("-")[0]


def _tensor_type(shape, elt, dynamic_dims, dynamic):
    dims = ["?" if dynamic and i in dynamic_dims else str(s) for i, s in enumerate(shape)]
    return "tensor<" + "x".join(dims) + "x" + elt + ">"


def mask_shape(case):
    kind = case["mask"]
    if kind is None:
        return None
    tq, tk = case["tq"], case["tk"]
    if kind.endswith("2"):
        return [tq, tk]
    # rank 4: broadcast over batch or heads, chosen from the seed.
    if case["seed"] % 2:
        return [1, case["hq"], tq, tk]
    return [case["b"], 1, tq, tk]


def mlir_text(case):
    elt = _elt(case)
    b, hq, hkv, tq, tk, d, dv = (case[k] for k in ("b", "hq", "hkv", "tq", "tk", "d", "dv"))
    dyn = case["dynamic"]
    # Split-KV needs a static Tq.
    tq_dyn = set() if case.get("static_tq") else {2}
    # Packed sequences: batch 1, static.
    bdyn = set() if case.get("varlen") else {0}
    qt = _tensor_type([b, hq, tq, d], elt, bdyn | tq_dyn, dyn)
    kt = _tensor_type([b, hkv, tk, d], elt, bdyn | {2}, dyn)
    vt = _tensor_type([b, hkv, tk, dv], elt, bdyn | {2}, dyn)
    if case.get("page"):
        # Pools of NP pages of a static page size.
        pool = paged_sizes(case)[1]
        kt = _tensor_type([pool, hkv, case["page"], d], elt, {0}, dyn)
        vt = _tensor_type([pool, hkv, case["page"], dv], elt, {0}, dyn)
    ot = _tensor_type([b, hq, tq, dv], elt, bdyn | tq_dyn, dyn)
    attrs = []
    if case["causal"]:
        attrs.append(f"causal = #attn.causal<{case['causal']}>")
    if case["dtype"] == "f32-ieee":
        attrs.append("precision = #attn.precision<ieee>")
    if case.get("window"):
        left, right = case["window"]
        attrs.append(f"window = #attn.window<left = {left}, right = {right}>")
    if case.get("softcap"):
        attrs.append(f"softcap = {case['softcap']} : f32")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    args = [f"%q: {qt}", f"%k: {kt}", f"%v: {vt}"]
    operands = "%q, %k, %v"
    types = f"{qt}, {kt}, {vt}"
    ms = mask_shape(case)
    if ms is not None:
        melt = "i1" if case["mask"].startswith("bool") else elt
        rank = len(ms)
        dyn_dims = {rank - 1} | ({rank - 2} if tq_dyn else set()) | (
            {0} if rank == 4 and ms[0] != 1 else set())
        mt = _tensor_type(ms, melt, dyn_dims, dyn)
        args.append(f"%m: {mt}")
        operands += " mask(%m)"
        types += f", {mt}"
    if case.get("page"):
        tt = _tensor_type([b, paged_sizes(case)[0]], "i32", {0, 1}, dyn)
        operands += f" block_table(%bt : {tt})"
    if case.get("kv_lengths"):
        lt = _tensor_type([b], "i32", {0}, dyn)
        args.append(f"%l: {lt}")
        operands += f" kv_lengths(%l : {lt})"
    if case.get("varlen"):
        ct = _tensor_type([case["varlen"] + 1], "i32", {0}, dyn)
        args += [f"%cq: {ct}", f"%ck: {ct}"]
        operands += f" cu_seqlens(%cq, %ck : {ct}, {ct})"
    if case.get("page"):
        args.append(f"%bt: {tt}")
    capture_types = {}
    for name, shape, celt in captures(case):
        capture_types[name] = _tensor_type(shape, celt, set(range(len(shape))), dyn)
        args.append(f"%{name}: {capture_types[name]}")
    regions = ""
    if case.get("score_mod"):
        regions += " " + _score_mod_region(case, capture_types.get("slopes"))
    if case.get("mask_mod"):
        regions += " " + _mask_mod_region(case, capture_types.get("doc"))
    prefix = ("  %prefix = arith.constant 7 : index\n"
              if case.get("mask_mod") == "prefix_lm" else "")
    results, values, returned = ot, "%o", ot
    if case.get("lse"):
        results += ", " + _tensor_type([b, hq, tq], "f32", bdyn | tq_dyn, dyn)
        values += ", %lse"
        returned = f"({results})"
    return (f"func.func @{case['name']}({', '.join(args)}) -> {returned} {{\n{prefix}"
            f"  {values} = attn.attention {operands}{attr}{regions} : {types} -> {results}\n"
            f"  return {values} : {results}\n}}\n")


def _structured_visible(case, ms):
    """A causal-like pattern whose diagonal moves with the mask's batch or
    head slice: whole blocks are removed, whole blocks see every key, and
    the ones across the diagonal mix (the classes of the block map of
    --attn-mask-block-map, which differ per slice). For seeds divisible by
    15 the first slice's diagonal is the block map's triangular one (key j
    seen from row i when j <= i + off, off the causal offset or 0), as in
    the seed's causal mask tensor; the others move by 32 keys a slice."""
    tq, tk = ms[-2], ms[-1]
    slices = int(np.prod(ms[:-2])) if len(ms) > 2 else 1
    i = np.arange(tq)[:, None]
    j = np.arange(tk)[None, :]
    if case["seed"] % 15 == 0:
        off = tk - tq if case["causal"] == "bottom_right" else 0
        diagonals = [off - 32 * s for s in range(slices)]
    else:
        diagonals = [7 * s - 3 for s in range(slices)]
    visible = np.stack([j <= i + d for d in diagonals])
    return visible.reshape(ms)


def _mask_array(case, rng):
    ms = mask_shape(case)
    if case.get("pattern") == "causal":
        # The seed's causal mask tensor: torch.where(tril(ones) == 0, -inf, 0).
        tq, tk = ms[-2], ms[-1]
        visible = np.arange(tk)[None, :] <= np.arange(tq)[:, None]
        m = np.where(visible, 0.0, -np.inf).astype(np.float32)
        return np.broadcast_to(m, ms).copy()
    structured = case["seed"] % 3 == 0
    if structured:
        visible = _structured_visible(case, ms)
        visible.reshape(-1, ms[-1])[0, :] = False  # one fully masked row
        if case["mask"].startswith("bool"):
            return visible
        m = np.where(visible, 0.0, -np.inf).astype(np.float32)
        # A band of rows with a bias: mixed blocks that are not on the
        # diagonal.
        band = slice(ms[-2] // 3, ms[-2] // 3 + 5)
        m[..., band, :] += rng.uniform(-2.0, 2.0, m[..., band, :].shape).astype(np.float32)
        if _elt(case) == "f16":
            return m.astype(np.float16)
        return m
    if case["mask"].startswith("bool"):
        m = rng.random(ms) < 0.7
        m.reshape(-1, ms[-1])[0, :] = False        # one fully masked row
        return m
    m = rng.uniform(-2.0, 2.0, ms).astype(np.float32)
    m[rng.random(ms) < 0.2] = -np.inf              # removed keys
    m.reshape(-1, ms[-1])[0, :] = -np.inf           # one fully masked row
    if _elt(case) == "f16":
        return m.astype(np.float16)
    if _elt(case) == "bf16":
        # numpy has no bf16: write the high half of each f32 as '<V2'.
        return m
    return m


def _save(path, array, elt):
    if elt == "bf16" and array.dtype == np.float32:
        bits = (array.astype(np.float32).view(np.uint32) >> 16).astype("<u2")
        np.save(path, bits.view(np.dtype("V2")))
    else:
        np.save(path, array)


def write_case(case, workdir):
    """Writes the .mlir file and any .npy inputs; returns the paths."""
    os.makedirs(workdir, exist_ok=True)
    base = os.path.join(workdir, case["name"])
    with open(base + ".mlir", "w") as f:
        f.write(mlir_text(case))
    rng = np.random.default_rng(case["seed"])
    files = {}
    elt = _elt(case)
    if case["nan_row"]:
        q = rng.uniform(-1, 1, [case["b"], case["hq"], case["tq"], case["d"]]).astype(np.float32)
        q[0, 0, case["tq"] // 2, 0] = np.nan
        if elt == "f16":
            q = q.astype(np.float16)
        files["q"] = base + ".q.npy"
        _save(files["q"], q, elt)
    if case["mask"] is not None:
        files["m"] = base + ".m.npy"
        _save(files["m"], _mask_array(case, rng), elt)
    if case.get("kv_lengths"):
        files["l"] = base + ".l.npy"
        np.save(files["l"], kv_lengths_array(case))
    if case.get("varlen"):
        files["cq"], files["ck"] = base + ".cq.npy", base + ".ck.npy"
        cu_q, cu_k = varlen_arrays(case)
        np.save(files["cq"], cu_q)
        np.save(files["ck"], cu_k)
    if case.get("page"):
        files["bt"] = base + ".bt.npy"
        np.save(files["bt"], block_table_array(case))
    for name, shape, celt in captures(case):
        files[name] = f"{base}.{name}.npy"
        np.save(files[name], _capture_array(name, shape, celt, rng))
    return base + ".mlir", files


def _capture_array(name, shape, elt, rng):
    if name == "slopes":
        # ALiBi's slopes: 2^(-8 (h + 1) / H).
        h = shape[0]
        return (2.0 ** (-8.0 * (np.arange(h) + 1) / h)).astype(np.float32)
    # Document ids of packed sequences of random lengths, per batch.
    doc = np.zeros(shape, dtype=np.int64 if elt == "i64" else np.int32)
    for b in range(shape[0]):
        starts = np.sort(rng.choice(np.arange(1, shape[1]) if shape[1] > 1 else [0],
                                    size=min(3, max(shape[1] - 1, 0)), replace=False))
        doc[b] = np.searchsorted(starts, np.arange(shape[1]), side="right") + 10 * b
    return doc


def attn_run_args(case, mlir, files, target="cpu"):
    elt = _elt(case)
    b, hq, hkv, tq, tk, d, dv = (case[k] for k in ("b", "hq", "hkv", "tq", "tk", "d", "dv"))
    args = [mlir, f"--target={target}", f"--seed={case['seed']}", "--check"]
    args.append("--input=@" + files["q"] if "q" in files else f"--input={b}x{hq}x{tq}x{d}x{elt}")
    kb, kt = (paged_sizes(case)[1], case["page"]) if case.get("page") else (b, tk)
    args.append(f"--input={kb}x{hkv}x{kt}x{d}x{elt}")
    args.append(f"--input={kb}x{hkv}x{kt}x{dv}x{elt}")
    if "m" in files:
        args.append("--input=@" + files["m"])
    if "l" in files:
        args.append("--input=@" + files["l"])
    if "cq" in files:
        args += ["--input=@" + files["cq"], "--input=@" + files["ck"]]
    if "bt" in files:
        args.append("--input=@" + files["bt"])
    for name, _, _ in captures(case):
        args.append("--input=@" + files[name])
    if case["block"]:
        args += [f"--block-m={case['block'][0]}", f"--block-n={case['block'][1]}"]
    if case.get("stages"):
        args.append(f"--num-stages={case['stages']}")
    if case.get("split") is not None:
        args.append(f"--split-programs={case['split']}")
    return args


def describe(case):
    keys = ("dtype", "b", "hq", "hkv", "tq", "tk", "d", "dv", "causal", "mask", "pattern", "dynamic",
            "nan_row", "block", "stages", "lse", "split", "kv_lengths", "varlen",
            "varlen_same", "varlen_gap", "page", "seed")
    text = " ".join(f"{k}={case.get(k)}" for k in keys)
    return text + "".join(f" {k}={case[k]}" for k in VARIANT_KEYS if case.get(k))


def _case(index, **kw):
    case = dict(name=f"m{index}", dtype="f16", d=64, dv=64, tq=65, tk=65, b=1,
                hkv=1, hq=1, causal=None, mask=None, dynamic=True, nan_row=False,
                block=None, stages=None, split=None, kv_lengths=False, varlen=None,
                page=None, seed=1000 + index)
    case.update(kw)
    return case


def matrix_cases():
    """The fixed matrix of issue 3, every axis covered deterministically."""
    cases = []
    add = lambda **kw: cases.append(_case(len(cases), **kw))  # noqa: E731
    # Every dtype (f32 both precisions) x every head dim, causal and not.
    for dtype in DTYPES:
        for d in HEAD_DIMS:
            add(dtype=dtype, d=d, dv=d, b=2, hq=2, hkv=2, tq=65, tk=129)
            add(dtype=dtype, d=d, dv=d, tq=127, tk=127, causal="top_left")
    # D != Dv both ways.
    add(dtype="bf16", d=64, dv=128, tq=17, tk=129)
    add(dtype="f32-ieee", d=256, dv=16, tq=63, tk=65, causal="bottom_right")
    # Head dims the GPU kernels pad to whole 16-element chunks (zero columns
    # in Q, K and V; the output's stored without them): D != Dv, a mask, the
    # tf32 kernels' tensor copies, pipelined loads, split-KV decode with GQA
    # packing.
    add(dtype="bf16", d=40, dv=72, tq=17, tk=129, causal="bottom_right")
    add(dtype="f16", d=120, dv=120, mask="bool4", b=2, hq=2, hkv=1, tq=65, tk=300)
    add(dtype="f32-tf32", d=72, dv=72, tq=129, tk=1000, stages=2, causal="top_left")
    add(dtype="f32-tf32", d=68, dv=36, tq=65, tk=65)
    add(split=264, static_tq=True, dtype="f16", b=2, hq=8, hkv=2, tq=4, tk=1000, d=40,
        dv=40, causal="bottom_right", lse=True)
    # Rows that are not whole 16-byte vectors (2-, 4- and 8-byte vectors).
    add(dtype="bf16", d=111, dv=59, mask="float4", b=2, hq=2, hkv=1, tq=65, tk=129)
    add(dtype="f16", d=1, dv=3, tq=17, tk=65, causal="top_left")
    add(dtype="f32-tf32", d=59, dv=30, tq=129, tk=300, causal="bottom_right")
    add(dtype="f32-ieee", d=98, dv=98, tq=63, tk=65)
    add(split=264, static_tq=True, dtype="bf16", b=2, hq=8, hkv=2, tq=1, tk=1000, d=99,
        dv=99, causal="bottom_right", lse=True)
    # Every (Tq, Tk) pair, with both causal alignments (Tq != Tk included).
    for tq in SEQ_LENS:
        for tk in SEQ_LENS:
            add(tq=tq, tk=tk, causal="top_left", d=16, dv=16)
            add(tq=tq, tk=tk, causal="bottom_right", d=16, dv=16, dtype="bf16")
    # Masks: additive with -inf (and a fully masked row), i1, rank 2 and
    # rank 4 broadcasts, alone and with causal, each dtype.
    for dtype in DTYPES:
        for mask in MASKS[1:]:
            add(dtype=dtype, mask=mask, b=2, hq=2, hkv=1, tq=63, tk=129)
            add(dtype=dtype, mask=mask, b=2, hq=2, hkv=2, tq=129, tk=64,
                causal="bottom_right", seed=2001 + len(cases))
    # GQA 4:1 and MQA.
    add(hq=8, hkv=2, b=2, tq=129, tk=127, causal="top_left")
    add(hq=8, hkv=1, b=2, tq=64, tk=1000, dtype="bf16")
    add(hq=4, hkv=1, b=1, tq=1, tk=1000, dtype="f32-tf32", causal="bottom_right")
    # NaN in one query row stays in that row, with and without masks.
    add(nan_row=True, tq=17, tk=65)
    add(nan_row=True, tq=65, tk=65, causal="top_left", mask="float2", dtype="f32-ieee")
    # Block sizes other than the default, with tails in both dimensions.
    add(block=(16, 8), tq=63, tk=1000, causal="bottom_right")
    add(block=(64, 32), tq=1000, tk=65, causal="top_left", dtype="bf16")
    add(block=(8, 16), tq=127, tk=129, mask="bool4", dtype="f32-ieee")
    # Pipelined K/V loads (--attn-pipeline) with 2, 3 and 4 stages: fewer
    # key blocks than stages, key tails, causal, masks, GQA.
    add(stages=2, tq=65, tk=1000, causal="bottom_right", mask="float2", b=2, hq=2, hkv=1)
    add(stages=3, tq=129, tk=129, causal="top_left", dtype="bf16", block=(64, 32))
    add(stages=3, tq=17, tk=17, d=16, dv=16, mask="bool4", dtype="f32-tf32")
    add(stages=4, tq=127, tk=65, dtype="f32-ieee", mask="float4", hq=4, hkv=2, b=2)
    add(stages=4, tq=1, tk=1000, causal="bottom_right", dtype="bf16", d=128, dv=128)
    # Pipelined loops under a block map: the live range of each program's
    # map row, and for f32 the run of zero-term blocks it starts with
    # (structured masks: seeds divisible by 3; rank 4 per batch or per head
    # by the seed's parity; key and query tails).
    add(stages=2, dtype="f32-tf32", mask="float2", tq=300, tk=257, seed=3000)
    add(stages=3, dtype="f32-ieee", mask="bool4", b=2, hq=2, hkv=1, tq=129,
        tk=300, causal="bottom_right", seed=3003)
    add(stages=2, dtype="f32-tf32", mask="float4", b=2, hq=2, hkv=2, tq=200,
        tk=200, causal="top_left", seed=3006)
    add(stages=2, dtype="bf16", mask="bool2", tq=129, tk=257, seed=3009)
    # Triangular blocks (the seed's causal mask tensor: seeds divisible by
    # 15), top-left and bottom-right, with the blocks that the fully masked
    # row and the band of biased rows make mixed; one and two stages; T = 1
    # and 17; an i1 mask; 16-bit programs, which read their terms.
    add(stages=2, dtype="f32-tf32", mask="float2", tq=300, tk=300, d=128,
        dv=128, seed=3015)
    add(stages=2, dtype="f32-tf32", mask="float4", b=2, hq=2, hkv=1, tq=129,
        tk=300, causal="bottom_right", seed=3030)
    add(stages=1, dtype="f32-tf32", mask="float2", tq=200, tk=200, seed=3045)
    add(dtype="f32-tf32", mask="float2", tq=1, tk=1, seed=3060)
    add(dtype="f32-tf32", mask="float4", tq=17, tk=17, causal="top_left",
        seed=3075)
    add(dtype="f32-tf32", mask="bool4", b=2, hq=2, hkv=2, tq=1000, tk=1000,
        d=16, dv=16, seed=3090)
    add(stages=2, dtype="bf16", mask="float2", tq=129, tk=129, seed=3105)
    # The seed's own form: an additive causal mask tensor (0 on and below
    # the diagonal, -inf above, top-left; pattern "causal"), no band, so
    # that every diagonal block is triangular: f32 programs run them as
    # the triangular run after the zero run. Query and key tails, Tq != Tk
    # both ways, T = 1 and 1000, three stages, a NaN row, GQA.
    for tq, tk in ((1, 1), (17, 17), (64, 64), (127, 127), (129, 129),
                   (300, 300), (1000, 1000), (65, 129), (129, 65), (512, 300)):
        add(dtype="f32-tf32", mask="float2", pattern="causal", d=128, dv=128,
            tq=tq, tk=tk)
    add(dtype="f32-tf32", mask="float4", pattern="causal", b=2, hq=4, hkv=2,
        tq=200, tk=200, stages=3)
    add(dtype="f32-ieee", mask="float2", pattern="causal", tq=129, tk=129,
        nan_row=True)
    # Static shapes.
    add(dynamic=False, tq=129, tk=17, mask="float4", causal="top_left")
    # The log-sum-exp result (SPEC.md section 1.2): every dtype, fully masked
    # rows (float and i1 masks, bottom-right rows without keys), a NaN row,
    # GQA, Tq != Tk, odd sizes, pipelined loops, structured masks (the block
    # map's classes), static shapes.
    for dtype in DTYPES:
        add(lse=True, dtype=dtype, mask="float4", b=2, hq=4, hkv=2, tq=65, tk=129,
            causal="top_left")
    add(lse=True, dtype="bf16", mask="bool2", tq=129, tk=63, causal="bottom_right")
    add(lse=True, dtype="f16", tq=127, tk=17, causal="bottom_right", d=80, dv=80)
    add(lse=True, dtype="f32-ieee", nan_row=True, tq=17, tk=1000, hq=4, hkv=1)
    add(lse=True, dtype="f32-tf32", stages=3, mask="float2", pattern="causal", tq=200, tk=200,
        d=128, dv=128)
    add(lse=True, dtype="bf16", stages=2, mask="bool4", b=2, hq=2, hkv=1, tq=129, tk=300,
        seed=3003)
    add(lse=True, dtype="f16", dynamic=False, tq=1, tk=1, d=256, dv=16)
    add(lse=True, dtype="f32-ieee", block=(8, 16), tq=63, tk=65, d=16, dv=64)
    # Split-KV (decode: a static Tq of one query block, --split-programs):
    # every dtype, GQA, both causal alignments, Tk below one key block, at a
    # block's tail and long, a mask with a fully masked row, the
    # log-sum-exp, pipelined loops; 264 is the GPUs' program count, 1
    # leaves one split.
    for n, dtype in enumerate(DTYPES):
        add(split=264, static_tq=True, dtype=dtype, b=2, hq=8, hkv=2, tq=1, tk=1000,
            d=128, dv=128, lse=n % 2 == 0)
        add(split=64, static_tq=True, dtype=dtype, b=1, hq=4, hkv=1, tq=16, tk=3000,
            causal="bottom_right", lse=True)
    add(split=64, static_tq=True, tq=3, tk=5, hq=4, hkv=2, causal="bottom_right", lse=True)
    add(split=64, static_tq=True, tq=4, tk=129, hq=2, hkv=2, causal="top_left")
    add(split=64, static_tq=True, tq=8, tk=1000, b=2, hq=2, hkv=1, mask="float4",
        dtype="bf16", lse=True)
    add(split=64, static_tq=True, tq=2, tk=1000, b=2, hq=2, hkv=2, mask="bool2",
        causal="bottom_right", stages=3, block=(16, 8))
    add(split=1, static_tq=True, tq=1, tk=1000, hq=4, hkv=4, dtype="f32-tf32", lse=True)
    add(split=264, static_tq=True, dynamic=False, tq=1, tk=700, b=3, hq=8, hkv=8,
        dtype="f16", lse=True)
    # Per-batch key counts (kv_lengths): decode and prefill, bottom-right
    # causal (offsets from each batch's own count), a window, masks, GQA,
    # with and without split-KV and the log-sum-exp; lengths 0 and Tk
    # among them (kv_lengths_array).
    add(kv_lengths=True, split=64, static_tq=True, b=4, hq=8, hkv=2, tq=1, tk=1000,
        causal="bottom_right", lse=True, dtype="bf16", d=128, dv=128)
    add(kv_lengths=True, b=3, hq=4, hkv=2, tq=1, tk=1000, static_tq=True,
        causal="bottom_right", dtype="f16")
    add(kv_lengths=True, b=3, hq=2, hkv=2, tq=129, tk=300, causal="bottom_right",
        window=(40, 0), lse=True, dtype="f32-ieee")
    add(kv_lengths=True, b=2, hq=2, hkv=1, tq=65, tk=129, mask="float4", lse=True,
        causal="top_left")
    add(kv_lengths=True, split=64, static_tq=True, b=3, hq=2, hkv=2, tq=4, tk=700,
        mask="bool4", window=(100, -1), causal="bottom_right", dtype="f32-tf32", lse=True,
        seed=4001)
    add(kv_lengths=True, b=3, hq=4, hkv=4, tq=1000, tk=64, causal="bottom_right",
        stages=2, dtype="bf16")
    # Packed sequences (cu_seqlens, batch 1): N of 1 to 9, odd lengths and
    # an empty sequence (varlen_arrays), Tq_s != Tk_s, the same offsets for
    # queries and keys, rows outside every sequence, GQA and MQA, causal
    # both alignments, windows, the log-sum-exp, every dtype, block sizes
    # and stages, a mask_mod and score_mod (b = the sequence).
    for n, dtype in enumerate(DTYPES):
        add(varlen=4, b=1, dtype=dtype, hq=4, hkv=2, tq=300, tk=300, varlen_same=True,
            causal="top_left", lse=True)
        add(varlen=3, b=1, dtype=dtype, hq=2, hkv=1, tq=257, tk=129,
            causal="bottom_right", lse=n % 2 == 1, varlen_gap=True)
        add(varlen=5, b=1, dtype=dtype, hq=4, hkv=4, tq=129, tk=1000, d=128, dv=128)
    for n, (tq, tk) in enumerate(((1, 1), (17, 65), (65, 17), (64, 64), (127, 129),
                                  (1000, 1000), (200, 63))):
        add(varlen=1 + n % 4, b=1, dtype="bf16" if n % 2 else "f16", tq=tq, tk=tk,
            hq=2, hkv=1, causal=("top_left", "bottom_right", None)[n % 3],
            varlen_same=tq == tk, lse=n % 3 == 0, d=64 if n % 2 else 80,
            dv=64 if n % 2 else 80)
    add(varlen=8, b=1, tq=1000, tk=1000, hq=8, hkv=1, causal="bottom_right",
        window=(50, 0), lse=True, dtype="bf16")
    add(varlen=6, b=1, tq=700, tk=900, hq=4, hkv=2, window=(30, 20), dtype="f16")
    add(varlen=3, b=1, tq=300, tk=300, hq=2, hkv=2, causal="top_left", window=(-1, 0),
        softcap=20.0, lse=True, dtype="f32-tf32")
    add(varlen=4, b=1, tq=300, tk=300, varlen_same=True, hq=4, hkv=2,
        mask_mod="document", dtype="bf16", lse=True)
    add(varlen=4, b=1, tq=250, tk=310, hq=4, hkv=1, score_mod="alibi",
        causal="bottom_right", dtype="f16")
    add(varlen=3, b=1, tq=200, tk=200, mask_mod="prefix_lm", causal="top_left",
        varlen_same=True, dtype="f32-ieee")
    add(varlen=5, b=1, tq=333, tk=333, block=(16, 8), causal="top_left",
        varlen_same=True, varlen_gap=True, lse=True)
    add(varlen=5, b=1, tq=333, tk=500, block=(64, 32), stages=3, causal="bottom_right",
        dtype="bf16", lse=True)
    add(varlen=2, b=1, tq=129, tk=129, stages=4, dtype="f32-ieee", d=16, dv=16,
        causal="top_left", varlen_gap=True)
    add(varlen=9, b=1, tq=90, tk=90, varlen_same=True, dynamic=False, lse=True,
        causal="bottom_right", dtype="f16")
    add(varlen=4, b=1, tq=300, tk=300, nan_row=True, causal="top_left")
    add(varlen=3, b=1, tq=256, tk=256, varlen_same=True, dtype="f32-tf32",
        d=256, dv=256, stages=2, causal="top_left")
    # A paged KV cache (block_table): pages of 16, 32, 64 and 256 keys, odd
    # page counts, decode with GQA packing and split-KV over logical keys,
    # kv_lengths, bottom-right causal, a window, a mask in logical keys,
    # the log-sum-exp, block sizes and stages, a score_mod (j logical).
    add(page=16, kv_lengths=True, split=64, static_tq=True, b=4, hq=8, hkv=2, tq=1,
        tk=1024, causal="bottom_right", lse=True, dtype="bf16", d=128, dv=128)
    add(page=64, kv_lengths=True, static_tq=True, b=3, hq=4, hkv=2, tq=1, tk=1024,
        causal="bottom_right", dtype="f16")
    add(page=256, split=264, static_tq=True, b=2, hq=8, hkv=1, tq=1, tk=1024,
        dtype="bf16", d=128, dv=128, lse=True)
    add(page=16, kv_lengths=True, b=2, hq=2, hkv=2, tq=129, tk=320,
        causal="bottom_right", window=(40, 0), lse=True, dtype="f32-ieee")
    add(page=64, kv_lengths=True, b=2, hq=2, hkv=1, tq=65, tk=192, mask="float4",
        lse=True, causal="top_left")
    add(page=16, b=2, hq=2, hkv=1, tq=100, tk=208, dtype="f32-tf32", causal="top_left")
    add(page=64, kv_lengths=True, b=3, hq=4, hkv=2, tq=300, tk=320, d=128, dv=128,
        causal="bottom_right", lse=True, dtype="bf16")
    add(page=16, b=2, hq=2, hkv=2, tq=200, tk=400, block=(64, 32), stages=3,
        causal="bottom_right", dtype="f16")
    add(page=32, b=2, hq=4, hkv=2, tq=65, tk=160, score_mod="alibi", dtype="f16",
        causal="bottom_right")
    return cases

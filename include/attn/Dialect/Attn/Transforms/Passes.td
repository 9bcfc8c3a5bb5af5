//===- Passes.td - attn dialect transform passes -----------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnTile : Pass<"attn-tile", "func::FuncOp"> {
  let summary = "Choose a kernel config and split attn.attention into programs";
  let description = [{
    Rewrites every `attn.attention` on tensors into a grid of programs, one
    per (batch, query head, query block): an `scf.forall` over
    `B x Hq x ceil(Tq / block_m)` whose body is one `attn.block_attention`
    on buffers. The kernel config (`#attn.config`) is chosen from the element
    type, the head dims and `target` by `selectKernelConfig`; each option that
    is not 0 overrides it. Query tails (Tq not a multiple of block_m) are left
    to the program, which masks them; the user pads nothing.

    Split-KV (flash-decoding): when Tq is static and fits one query block
    (decode), `B x Hq` programs cannot fill a GPU, so the keys are split
    as well: the grid is `B x Hq x S` programs, split `s` reading its run
    of key blocks (`key_split`) and writing the softmax of those keys alone
    and its log-sum-exp to f32 workspaces (`split_output`, `split_lse`);
    a second grid (`attn.split_combine`) merges them exactly into the
    results. `S = min(ceil(Tk / (4 block_n)), ceil(P / (B Hq)))`, with `P`
    the `split-programs` option, is evaluated at launch time.

    GQA decode packing (`getQueryHeadPacking`): with a static Tq of 1 and
    every query row seeing the same keys (no mask tensor, region or window;
    `causal` absent or `bottom_right`), the `g = Hq / Hkv` query heads of a
    KV head are the rows of one program: the grid runs over KV heads
    (`B x Hkv x S`, `S` counted with `Hkv`) on `B x Hkv x g` views of the
    query, the output and the log-sum-exp, so each program reads its KV
    head's keys once. With a static Tq of 2..16 (speculative decoding; no
    softcap either), `p` query heads of a KV head, the largest `p` dividing
    `g` with `p * Tq <= block_m`, are one program's `p * Tq` rows
    (`packed_heads = p` on the block op, grid `B x Hq/p x S`): row `r` is
    query `r mod Tq` of its head, so causal of either alignment applies per
    row.

    The tensors enter and leave through `bufferization.to_buffer` /
    `bufferization.to_tensor`, so one-shot bufferization later turns the
    function into one on buffers.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Target: 'cpu' or a CUDA chip (sm_80, sm_90a, ...)">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Query rows per program (0: default for the target)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Keys per key/value block (0: default for the target)">,
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"0",
           "Warps per program (0: default for the target)">,
    Option<"numStages", "num-stages", "int64_t", /*default=*/"0",
           "K/V pipeline stages (0: default for the target)">,
    Option<"splitPrograms", "split-programs", "int64_t", /*default=*/"-1",
           "Split-KV for a static Tq of one query block: the programs the "
           "key splits aim for (0: no splits; -1: the target's default, 0 on the host and 264 on GPUs)">
  ];
  let statistics = [
    Statistic<"numTiled", "num-tiled", "Number of attn.attention ops tiled">
  ];
}

def AttnOnlineSoftmax : Pass<"attn-online-softmax", "func::FuncOp"> {
  let summary = "Expand each program into the exact online-softmax loop";
  let description = [{
    Expands every `attn.block_attention` into the FlashAttention recurrence
    over key/value blocks of `block_n` keys:

    ```
    c = scale * log2(e)                      (folded once)
    S     = c * Q_blk K_blk^T  (+ log2(e) * bias, masked keys -> -inf)
    m_new = max(m_old, rowmax(S))
    alpha = exp2(m_old - m_new)
    P     = exp2(S - m_new)
    l     = alpha * l + rowsum(P)
    acc   = alpha * acc + P V_blk
    O     = acc * (1 / l)  (once, after the loop: one division per row; 0 where l == 0)
    ```

    With `c > 0`, the scale is folded into the exponent, as
    FlashAttention-2 does: S stays `Q_blk K_blk^T` (a float mask's term `t`
    is added as `t / c`), the running max is taken on unscaled scores (a
    positive `c` keeps their order),
    `P = exp2(fma(S, c, -c * m_new))` and `alpha = exp2(c * m_old +
    (-c * m_new))`. That is one multiply per score less (docs/GPU.md, The
    online softmax on the GPU). The fma is 16-bit kernels' form:
    every P of a row then carries the factor `2^r`, `r` the rounding error
    of `c * m_new`, which `acc / l` cancels (alpha rounds `c * m_old`
    before adding, so old and new terms share the rounded reference), but
    which grows with the scores: exact while `|c * m| < 2^24`, P past the
    16-bit range beyond about `2^27`. f32 kernels take
    `P = exp2(c * S + (-c * m_new))` with the product rounded first
    (`arith.mulf` + `arith.addf`), so the row max is `exp2(0)` exactly at
    any size (fused, scores past about `2^32` made rows of NaN); that costs
    little on f32 kernels and too much on 16-bit ones (docs/GPU.md, The
    online softmax on the GPU).

    A program with variants (`window`, `softcap`, `score_mod`,
    `mask_mod`) visits only the key blocks its rows can see under causal
    and the window, bounds in closed form from the query block
    (`affine.max` / `affine.min` of it, Tq and Tk; see
    `buildKeyBlockRange`), and runs the blocks every row sees entirely
    without a mask. A `mask_mod` of index arithmetic and compares is
    evaluated on each block's row and key intervals: blocks it removes
    are skipped, whole blocks it keeps run unmasked; under any other
    `mask_mod` or a mask tensor every block is masked. Its scores
    follow SPEC.md section 1.1 per element, the regions inlined:
    `s = scale * Q K^T`, `softcap * tanh(s / softcap)`, `+ bias`,
    `score_mod(s, b, h, i, j)`, then `S = log2(e) * s` (a softcap or a
    `score_mod` keeps the scale out of the exponent), `-inf` where the tail,
    causal, the window, the mask or the `mask_mod` removes the key.

    The reference max is updated lazily: a row keeps `m` until its block
    max exceeds it by more than 8 in exp2 units (`8 / c` on unscaled
    scores), so `P <= 2^8` and `alpha` is exactly 1 for the rows that keep
    it. The quotient `acc / l` is unchanged (every term of a row shares its
    reference); the GPU lowering skips the rescale of `acc` when a warp's
    rows all have `alpha == 1`.

    Key blocks come in three classes: blocks that need no mask (run by a
    first loop without any select), blocks on the causal diagonal or at the
    key tail, or any block when a user mask is given (a second loop that
    applies the masks), and blocks wholly above the causal diagonal, which
    are never visited or loaded. A row whose keys are all masked out keeps
    `m = -inf`, its `P` is 0 and its output 0.

    For an f32 causal program on a GPU target, each diagonal block first
    ORs "row i sees the block's first key" over the program's rows into an
    `i1` flag, and `Q K^T` and the rest of the block run under two `scf.if`
    on it. The GPU lowering ORs the flag over each warp's rows, so a warp
    whose rows are all above the block skips it (16-bit kernels have none:
    with it ptxas reorders their unmasked loop; docs/GPU.md, The key
    loops). Likewise, under a block map, an f32 GPU program ORs
    "term != -inf" of each mixed block's mask terms into a flag and runs
    the block's softmax and `P V` under it (docs/GPU.md, Mask tensors: the
    block map); for a triangular block (class 3 of
    `--attn-mask-block-map`) it ORs "row i sees the block's first key" over
    the rows before `Q K^T`, which runs under the flag too.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numExpanded", "num-expanded",
              "Number of attn.block_attention ops expanded">
  ];
}

def AttnMaskBlockMap : Pass<"attn-mask-block-map", "func::FuncOp"> {
  let summary = "Classify a mask tensor's or a data mask_mod's blocks once per launch";
  let description = [{
    For every program grid whose `attn.block_attention` reads a mask tensor,
    allocates a block map (`memref<MBxMHxNIxNJxi8>`, `attn.workspace =
    "mask_block_map"`: MB and MH are 1 where the mask's type broadcasts over
    batch or heads, else B and Hq; NI = ceil(Tq / block_m), NJ =
    ceil(Tk / block_n)) before the grid, and a classification grid
    (`scf.forall` over the map's four dimensions, tagged
    `attn.mask_block_map` with the programs' config) that writes one class
    per block:

    - 0: every score of the block is removed (by the mask, the causal
      diagonal or the key tail): its program skips it;
    - 1: the mask adds exactly 0 to every score and nothing is removed: its
      program reads no mask element for it;
    - 2: any other block (mixed): its program reads the block's mask
      elements;
    - 3: the mask's terms are those of a triangular mask: 0 where key
      `j <= i + off` (and `j < Tk`), -inf elsewhere, with `off` the causal
      offset (0, top-left, without `causal`), as in the blocks across the
      diagonal of a causal mask tensor: its program builds its scores
      from the diagonal, reading no mask element (f32 GPU programs also
      skip its Q K^T per warp, as a causal diagonal block).

    The classes are computed from the same terms the scores use
    (`KeyVisibility`, which tests the key tail and the causal diagonal as one
    compare against the row's limit, `j < min(Tk, i + off + 1)`), over the
    same rows (padded rows read the last row),
    so a program that follows the map computes exactly what it computes
    without one. The program gets the map as its `block_map` operand; the
    map is freed after the grid. A mask tensor is read once per launch
    instead of once per program that reads it (the seed's causal mask
    tensor at T=512: once instead of 3072 times), and the blocks it does
    not mix are read not at all. With two or more stages,
    `--attn-online-softmax` has each program scan its map row for the
    first and one past the last live block and runs the (pipelined) key
    loop over that range only, so that blocks the map removes at either end
    are not loaded a block ahead; f32 programs run the zero-term blocks
    that start the range with the unmasked step (no class load, no
    branches). An f32 program whose map row has exactly the classes of a
    triangular mask (the scan also counts the triangular blocks: zero-term
    blocks up to the block of key `row0 + off + 1`, triangular ones up to
    the block of the last row's diagonal key, removed ones after; every row
    of the seed's causal mask tensor) runs the loops of a causal program
    instead, with the diagonal at `off` and the causal formulas as bounds:
    no class loads, no class dispatch. Any other row runs the map's loops.

    A program without a mask tensor whose `mask_mod` reads data (document
    ids: one that `--attn-online-softmax` cannot classify on intervals at
    compile time) gets a map too: MB = B, MH = Hq where the region reads its
    head argument, else 1; the grid evaluates the region, the causal limit,
    the window and the key tail at every pair of the block (rows and keys
    clamped to Tq - 1 and Tk - 1), and the program clamps its key loop to
    the blocks the map keeps and skips a removed one inside
    (docs/Variants.md).

    On the GPU the classification grid is a second kernel, launched before
    the attention kernel, and the map a workspace of the launch manifest
    (docs/ManifestKernels.md, version 2).

    Programs with per-batch key counts (`kv_lengths`), packed sequences
    (`cu_seqlens`) or a paged cache (`block_table`) get no map: its classes
    take one Tk for every batch and one block of rows for every program.
    They read the mask per element.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numMapped", "num-mapped",
              "Number of programs given a mask block map">
  ];
}

def AttnPipeline : Pass<"attn-pipeline", "func::FuncOp"> {
  let summary = "Software-pipeline the K/V tile loads of the key loops";
  let description = [{
    Multi-buffers the K/V tiles of every key loop into `num_stages` slots and
    loads them `num_stages - 1` iterations ahead of the block math that reads
    them, with a prologue before the loop:

    ```
    load(lb) -> slot 0; ...; load(lb + S - 2) -> slot S - 2     (prologue)
    scf.for %i = lb to ub {
      S = Q K^T on slot (%i - lb) mod S                          (stage S-1)
      load(%i + S - 1) -> slot (%i + S - 1 - lb) mod S           (stage 0)
      rest of the math on slot (%i - lb) mod S                   (stage S-1)
    }
    ```

    The loads go after the block's first contraction when it is a direct
    child of the loop (else first): on the GPU the cp.async then does not
    sit just before the first fragment loads, which would wait on its
    address registers (docs/GPU.md, Loads and the pipeline).

    A key loop is an `scf.for` of step 1 whose body starts with copies from
    the inputs into block tiles (`memref.alloca`, possibly zero-filled
    first), with only pure ops between them. Built as two steps, each usable
    alone (`phase`):

    - `schedule`: multi-buffers the tiles (a leading slot dimension; every
      use reads the slot of its iteration) and annotates the loop with
      `attn.pipeline_stages = S` and each op of its body with
      `attn.pipeline_stage` (0 for the loads and the address arithmetic they
      need, S - 1 for the rest).
    - `expand`: rewrites each annotated loop with upstream
      `scf::pipelineForLoop`. The epilogue is not peeled: loads of
      iterations past the end are predicated off by copying zero rows, so
      the math is emitted once. The loads it moves ahead are marked
      `attn.async_copy`; the GPU lowering issues them as cp.async with one
      commit group per copy and waits at the head of the loop for the
      copies of the current iteration.

    Consecutive key loops over the same tiles, the second starting where
    the first ends (the unmasked blocks, then the diagonal or tail ones), are
    chained (`chain`): the first loop's loads run on up to the second's end
    for the blocks the second loads whole, so its last iterations load the
    second loop's first blocks, whose slots count on from the first loop's
    lower bound; the second loop's prologue loads only a partial block (a
    key tail). Without it every program waits for the second loop's first
    block after the first loop ends. 16-bit kernels, at the register
    limit, gain nothing (head dim 128) or spill (head dim 64), so by
    default only loops of 32-bit tiles are chained (docs/GPU.md, Loads
    and the pipeline).

    The stage count is `num-stages`, or else the `num_stages` of the
    enclosing program grid's `attn.config`; loops with fewer than 2 stages
    are left alone. On the CPU the result is the same computation in a
    different order, which `attn-run --target=cpu --num-stages=N --check`
    verifies.

    With `scores-ahead` (`all`; `tf32`: loops of f32 tiles, head dim
    64-128, in programs whose `Q K^T` runs on wgmma; `auto`, the default of
    `--attn-to-nvvm` on sm_90a: those and loops of 16-bit tiles at head dim
    128 in such programs),
    a two-stage key loop whose block math starts with
    the scores `S = 0; S += Q K^T` runs them one block ahead, in three
    pipeline stages over the same two slots per tile:

    ```
    load K(lb), K(lb + 1), V(lb); S' = Q K(lb)^T; S = S'          (prologue)
    scf.for %i = lb to ub {
      load K(%i + 2), V(%i + 1)                       (stages 0 and 1)
      S' = Q K(%i + 1)^T                              (stage 1)
      softmax(S), O = O * alpha + P V(%i)             (stage 2)
      S = S'                                          (stage 1)
    }
    ```

    On sm_90a, where the loop's `Q K^T` runs on wgmma (16-row warps in whole
    warpgroups), `S'` is issued asynchronously and waited for
    only before `S = S'`, so the tensor cores compute the next block's
    scores while the warps run this block's softmax and `P V` (which stays
    on `mma.sync`). Such a loop can come first in a chain (its loads run on
    into the next loop's first block); a loop that continues another (the
    key tail after the unmasked blocks) is not scheduled so. The last
    iteration computes the scores of the block past its end: in a chain,
    the next loop's first block, whose K it loaded. That loop then skips
    its zero fill and `Q K^T` of S in its first iteration (under `scf.if`,
    tagged `attn.scores_handed`) when the scores-ahead loop ran and the
    block is whole (partial blocks are the next loop's to load).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
  let options = [
    Option<"numStages", "num-stages", "int64_t", /*default=*/"0",
           "Stages (0: the num_stages of the program's attn.config)">,
    Option<"chain", "chain", "std::string", /*default=*/"\"f32\"",
           "Chain consecutive key loops: 'all', 'f32' (loops of 32-bit "
           "tiles) or 'none'">,
    Option<"phase", "phase", "std::string", /*default=*/"\"all\"",
           "'schedule' (annotate only), 'expand' (expand annotated loops "
           "only) or 'all'">,
    Option<"scoresAhead", "scores-ahead", "std::string", /*default=*/"\"none\"",
           "Compute the next block's scores (Q K^T) before this block's "
           "softmax and P V, in two-stage loops whose math starts with them: "
           "'none', 'tf32' (f32 tiles, head dim 64-128, in programs whose "
           "Q K^T runs on wgmma: sm_90a, 16-row warps in whole warpgroups, "
           "not ieee), 'auto' (those and 16-bit tiles at head dim 128 in such "
           "programs) or 'all'">
  ];
  let statistics = [
    Statistic<"numPipelined", "num-pipelined", "Number of key loops pipelined">
  ];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

//===- AttnOps.td - attn dialect ops -----------------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_FloatElement : AnyTypeOf<[F32, F16, BF16]>;
def Attn_MaskElement : AnyTypeOf<[F32, F16, BF16, I1]>;

def Attn_AttentionOp : Attn_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "scaled dot-product attention over whole 4-D tensors";
  let description = [{
    For every batch `b`, query head `h`, query row `i` and value column `d`:

    ```
    s[j]       = scale * dot(Q[b,h,i,:], K[b,g(h),j,:]) + bias(b,h,i,j)
    O[b,h,i,d] = sum_j softmax(s)[j] * V[b,g(h),j,d]
    ```

    where `j` runs over the keys that are not masked out and
    `g(h) = h / (Hq / Hkv)` (grouped-query and multi-query attention).

    Shapes: `query` is `B x Hq x Tq x D`, `key` is `B x Hkv x Tk x D`, `value`
    is `B x Hkv x Tk x Dv` and the result is `B x Hq x Tq x Dv`. B, Hq, Hkv, Tq
    and Tk may be dynamic; D and Dv are static, 1..256. Q, K, V and the result
    share one element type (f32, f16 or bf16); accumulation is f32.

    Attributes:
    - `scale` (f32, default `1/sqrt(D)`), finite and positive;
    - `causal`: `#attn.causal<top_left>` (key j visible from query i when
      `j <= i`) or `#attn.causal<bottom_right>` (`j <= i + Tk - Tq`);
    - `precision` (f32 inputs only): `#attn.precision<tf32>` (default) or
      `#attn.precision<ieee>`;
    - `window`: `#attn.window<left = L, right = R>` keeps key j for query i
      when `i + off - L <= j <= i + off + R`, with `off = Tk - Tq` under
      `#attn.causal<bottom_right>`, else 0; `L` or `R` = -1 leaves that side
      unbounded;
    - `softcap` (f32, finite and positive): scores become
      `softcap * tanh(s / softcap)`.

    Any other attribute is an error.

    The optional `mask` has rank 2 (`Tq x Tk`) or 4 (`B x Hq x Tq x Tk`), each
    dimension either 1 or equal to the one it broadcasts to. A float mask is
    added to the scores (`-inf` removes a key); an `i1` mask keeps a key where
    it is true. Mask and `causal` combine. A row whose keys are all masked out
    yields zeros.

    Two optional regions modify the scores and the kept keys, FlexAttention's
    `score_mod` and `mask_mod`, each one block with exactly these arguments,
    ending in `attn.yield`:

    - `score_mod(s: f32, b: index, h: index, i: index, j: index)` yields the
      score (f32) of key `j` for query row `i` of batch `b`, query head `h`;
    - `mask_mod(b: index, h: index, i: index, j: index)` yields whether the
      key is kept (i1).

    They hold pure scalar ops only (arith, math, `tensor.extract`, `scf.if`,
    `arith.select`) and may read values defined above the op: scalars, and
    ranked tensors through `tensor.extract` (such as ALiBi slopes or the
    document ids of packed sequences).

    For key j of query i, in order:

    ```
    s = scale * dot(Q[b,h,i,:], K[b,g(h),j,:])
    s = softcap * tanh(s / softcap)         (with softcap)
    s = s + bias(b,h,i,j)                   (a float mask)
    s = score_mod(s, b, h, i, j)            (with score_mod)
    ```

    The key is kept when every one of `causal`, `window`, an `i1` mask and
    `mask_mod` keeps it; a kept key whose final score is `-inf` counts as
    masked.

    The optional `kv_lengths` (`B`, i32) gives each batch its own key
    count (FlashAttention's `cache_seqlens`: a KV cache of capacity `Tk`
    holding `kv_lengths[b]` keys): for batch `b` the keys `j >=
    kv_lengths[b]` do not exist, and `kv_lengths[b]` stands for `Tk`
    everywhere, in the `bottom_right` causal and window offset too. A length
    is clamped to `0..Tk`; a batch with none yields zeros.

    The optional pair `cu_seqlens(cu_q, cu_k)` (both `N + 1`, i32) packs `N`
    variable-length sequences along the sequence dimensions
    (FlashAttention's `flash_attn_varlen_func`): Q, K, V, the result and
    `lse` have batch dimension 1 (static), and sequence `s` owns the query
    rows `cu_q[s] .. cu_q[s+1]-1` and the keys `cu_k[s] .. cu_k[s+1]-1`.
    Each sequence is an independent attention of `Tq_s x Tk_s` (`Tq_s =
    cu_q[s+1] - cu_q[s]`, `Tk_s` likewise): `causal`, `window`, the
    `bottom_right` offset `Tk_s - Tq_s`, the key tail and `lse` apply per
    sequence, and the regions see `b = s` and positions `i`, `j` within the
    sequence. Query rows outside `cu_q[0] .. cu_q[N]-1` belong to no
    sequence: they yield zeros (`lse` `-inf`), as does a sequence without
    keys. The values must rise monotonically within `0..Tq` (`cu_q`) and
    `0..Tk` (`cu_k`); the runtimes check that before a launch, and the
    kernels clamp them into those ranges, so other values never read or
    write out of bounds (their results are unspecified). `cu_seqlens`
    excludes a `mask` operand and `kv_lengths` (a per-batch count), which
    address the batch dimension that packing removes.

    The optional `block_table(bt)` (`B x P`, i32) reads the keys and values
    from a paged KV cache (vLLM's PagedAttention, FlashAttention's
    `block_table`): `key` is `NP x Hkv x page x D` and `value` `NP x Hkv x
    page x Dv`, a pool of `NP` pages of `page` (static) keys each, and the
    logical key `j` of batch `b` is `K[bt[b, j / page], g(h), j % page, :]`
    (V likewise), so `Tk = P * page`. Everything else (`causal`, `window`,
    `kv_lengths`, a `mask`, the regions, `lse`) sees logical keys `j` in
    `0..Tk`. With `kv_lengths` (the usual decode form), keys `j >=
    kv_lengths[b]` do not exist and their table entries are never read.
    Page ids outside `0..NP-1` are clamped into that range by the kernels
    (never out of bounds; the results are unspecified); the runtimes check
    the entries that are used before a launch. GPU kernels take a page of
    16..256 keys, a power of two; `block_table` excludes `cu_seqlens`.

    The optional second result `lse` (`B x Hq x Tq`, f32) holds, for each
    query row, the natural log of the sum over its kept keys of `exp(s)` of
    the final scores: FlashAttention's `softmax_lse`, what split-KV,
    cascade and ring attention combine partial results with. A row with no
    kept key has `-inf`.

    Examples:

    ```mlir
    %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>, scale = 0.125 : f32}
           : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
           -> tensor<?x32x?x128xbf16>
    %o2 = attn.attention %q, %k, %v mask(%m)
           : tensor<2x8x77x64xf16>, tensor<2x8x90x64xf16>, tensor<2x8x90x64xf16>,
             tensor<1x1x77x90xi1> -> tensor<2x8x77x64xf16>
    // A causal sliding window of 1024 keys, soft-capped scores, ALiBi
    // (slopes[h] * (j - i)) and a document mask of packed sequences.
    %o3 = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>,
                                     window = #attn.window<left = 1024, right = 0>,
                                     softcap = 50.0 : f32}
           score_mod {
           ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
             %slope = tensor.extract %slopes[%h] : tensor<32xf32>
             %d = arith.subi %j, %i : index
             %di = arith.index_cast %d : index to i64
             %df = arith.sitofp %di : i64 to f32
             %bias = arith.mulf %slope, %df : f32
             %t = arith.addf %s, %bias : f32
             attn.yield %t : f32
           }
           mask_mod {
           ^bb0(%b: index, %h: index, %i: index, %j: index):
             %di = tensor.extract %doc[%b, %i] : tensor<?x?xi32>
             %dj = tensor.extract %doc[%b, %j] : tensor<?x?xi32>
             %same = arith.cmpi eq, %di, %dj : i32
             attn.yield %same : i1
           }
           : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
           -> tensor<?x32x?x128xbf16>
    // Decode against a KV cache: 1 new query row per sequence, each sequence
    // with its own cache length.
    %o5 = attn.attention %q1, %kc, %vc kv_lengths(%lens : tensor<?xi32>)
           {causal = #attn.causal<bottom_right>}
           : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
           -> tensor<?x32x1x128xbf16>
    // Three packed prompts (cu_q = cu_k = [0, t0, t0 + t1, Tq]), each
    // causal over its own tokens.
    %o6 = attn.attention %qp, %kp, %vp cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>)
           {causal = #attn.causal<top_left>}
           : tensor<1x32x?x128xbf16>, tensor<1x8x?x128xbf16>, tensor<1x8x?x128xbf16>
           -> tensor<1x32x?x128xbf16>
    // Decode against a paged KV cache: a pool of pages of 64 keys, each
    // sequence's pages listed in its row of the block table.
    %o7 = attn.attention %q1, %kpool, %vpool block_table(%bt : tensor<?x?xi32>)
           kv_lengths(%lens : tensor<?xi32>) {causal = #attn.causal<bottom_right>}
           : tensor<?x32x1x128xbf16>, tensor<?x8x64x128xbf16>, tensor<?x8x64x128xbf16>
           -> tensor<?x32x1x128xbf16>
    // The output and its log-sum-exp.
    %o4, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>}
           : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>
           -> tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
    ```
  }];

  let arguments = (ins
    RankedTensorOf<[Attn_FloatElement]>:$query,
    RankedTensorOf<[Attn_FloatElement]>:$key,
    RankedTensorOf<[Attn_FloatElement]>:$value,
    Optional<RankedTensorOf<[Attn_MaskElement]>>:$mask,
    Optional<RankedTensorOf<[I32]>>:$kv_lengths,
    Optional<RankedTensorOf<[I32]>>:$cu_seqlens_q,
    Optional<RankedTensorOf<[I32]>>:$cu_seqlens_k,
    Optional<RankedTensorOf<[I32]>>:$block_table,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<Attn_CausalAttr>:$causal,
    OptionalAttr<Attn_PrecisionAttr>:$precision,
    OptionalAttr<Attn_WindowAttr>:$window,
    OptionalAttr<F32Attr>:$softcap
  );
  let results = (outs RankedTensorOf<[Attn_FloatElement]>:$output,
                     Optional<RankedTensorOf<[F32]>>:$lse);
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);

  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `)`)?
    (`block_table` `(` $block_table^ `:` type($block_table) `)`)?
    (`kv_lengths` `(` $kv_lengths^ `:` type($kv_lengths) `)`)?
    (`cu_seqlens` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `:`
     type($cu_seqlens_q) `,` type($cu_seqlens_k) `)`)? attr-dict
    (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)? `:`
    type($query) `,` type($key) `,` type($value) (`,` type($mask)^)?
    `->` type($output) (`,` type($lse)^)?
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// The scale applied to Q.K^T: the `scale` attribute or 1/sqrt(D).
    double getScaleValue();
    /// True when f32 inputs use full IEEE f32 matmuls.
    bool isIEEEPrecision();
    /// The causal alignment, if any.
    std::optional<CausalKind> getCausalKind();
    int64_t getHeadDim() { return getQuery().getType().getDimSize(3); }
    int64_t getValueHeadDim() { return getValue().getType().getDimSize(3); }
    Type getElementType() { return getQuery().getType().getElementType(); }
    /// Whether the op has a window, a softcap or a modifier region.
    bool hasVariant() {
      return getWindow() || getSoftcap() || !getScoreMod().empty() ||
             !getMaskMod().empty();
    }
    /// With `block_table`, the keys of a page ('key' dim 2); 0 without.
    int64_t getPageSize() {
      return getBlockTable() ? getKey().getType().getDimSize(2) : 0;
    }
    /// The tensors defined above the op that its regions read
    /// (tensor.extract), each once, score_mod's first, in the order the
    /// programs take them as captures.
    SmallVector<Value> getCapturedTensors();
  }];
}

//===----------------------------------------------------------------------===//
// Block level
//===----------------------------------------------------------------------===//

def Attn_BlockAttentionOp : Attn_Op<"block_attention",
                                     [AttrSizedOperandSegments]> {
  let summary = "the attention of one program: one query block of one head";
  let description = [{
    Produced by `--attn-tile` inside the program grid (`scf.forall` over
    batch, query head and query block). Computes rows
    `[query_block * block_m, min((query_block + 1) * block_m, Tq))` of
    `output[batch, head]` with the semantics of `attn.attention`, reading the
    whole key/value sequence of KV head `head / (Hq / Hkv)`. Rows past `Tq`
    are neither computed into the output nor read from the query.

    With a mask, `block_map` (added by `--attn-mask-block-map`) holds one
    byte per (mask batch, mask head, query block, key block): 0 when the
    mask removes every key of the block for every row of the program, 1
    when it adds exactly 0 to every score of the block (no tail or causal
    cut either), 3 when its terms are a triangular mask's (0 for keys up to
    the diagonal `j <= i + off`, `off` the causal offset or 0, and before
    `Tk`; -inf elsewhere), 2 otherwise. Dimensions 0 and 1 have size 1 where the
    mask broadcasts over batch or heads (index 0 is read there).

    With `kv_lengths`, the keys of batch `b` are the first
    `kv_lengths[b]` (clamped to `0..Tk`), as for `attn.attention`.

    With `block_table` (`B x P`), `key` and `value` are pools of pages
    (`NP x Hkv x page x D`) and the program reads logical key `j` of batch
    `b` from page `block_table[b, j / page]` (clamped to `0..NP-1`), row `j %
    page`: each key block lies within one page (`block_n` divides the page),
    and `Tk = P * page`.

    With `cu_seqlens(cu_q, cu_k)` (packed sequences, batch 1), `query_block`
    is a slot of the packed grid, not a block of rows: the program finds its
    segment (the rows before `cu_q[0]`, sequence `s`, or the rows from
    `cu_q[N]` on) by a binary search over the segments' first slots
    `floor(c_t / block_m) + t` (`c` = `0, cu_q[0], ..., cu_q[N]`), takes
    block `query_block - first slot` of that segment's rows, and computes it
    as an attention of the sequence's own rows and keys (the rows of no
    sequence have no keys). Slots past a segment's last block compute
    nothing. The grid's query dimension has `ceil(Tq / block_m) + N + 2`
    slots.

    With `lse` (`B x Hq x Tq`), the program also writes the log-sum-exp of
    its rows there, as `attn.attention`'s second result.

    With `packed_heads = p` (GQA decode packing of several query rows), the
    program's rows are the static `Tq` rows of the `p` query heads `head * p
    .. head * p + p - 1`, which share KV head `head * p / (Hq / Hkv)`: row
    `r` is query `r mod Tq` of head `head * p + r / Tq`, and the causal
    alignment and kv_lengths apply to each row at its own query index. `p *
    Tq` rows fill one query block (`query_block` is 0), so the program reads
    its KV head's keys once for all of them.

    With `key_split [%s of %n]`, the program reads only split `%s` of `%n`
    equal runs of whole key blocks (split-KV, flash-decoding): its `output`
    (f32) and `lse` hold the softmax of those keys alone, which a combine
    step merges exactly with the other splits' by their log-sum-exps.

    `window`, `softcap` and the `score_mod` / `mask_mod` regions are those
    of `attn.attention`. The tensors the regions read become read-only
    buffers, listed as `captures`, and the regions read them with
    `memref.load` (their only other ops: pure arith and math, `scf.if`).

    The loop over key/value blocks is not explicit yet: `--attn-online-softmax`
    expands this op into it, since only the online softmax makes splitting
    the key sequence exact.

    ```mlir
    attn.block_attention ins(%q, %k, %v) outs(%o) at [%b, %h, %qb]
        {config = #attn.config<block_m = 64, block_n = 64, num_warps = 4,
                               num_stages = 2, target = "cpu">,
         scale = 0.125 : f32}
        : memref<?x8x?x64xf16>, memref<?x2x?x64xf16>, memref<?x2x?x64xf16>
          outs memref<?x8x?x64xf16>
    ```
  }];

  let arguments = (ins
    Arg<MemRefRankOf<[Attn_FloatElement], [4]>, "", [MemRead]>:$query,
    Arg<MemRefRankOf<[Attn_FloatElement], [4]>, "", [MemRead]>:$key,
    Arg<MemRefRankOf<[Attn_FloatElement], [4]>, "", [MemRead]>:$value,
    Arg<Optional<MemRefOf<[Attn_MaskElement]>>, "", [MemRead]>:$mask,
    Arg<Optional<MemRefRankOf<[I8], [4]>>, "", [MemRead]>:$block_map,
    Arg<Optional<MemRefRankOf<[I32], [1]>>, "", [MemRead]>:$kv_lengths,
    Arg<Optional<MemRefRankOf<[I32], [1]>>, "", [MemRead]>:$cu_seqlens_q,
    Arg<Optional<MemRefRankOf<[I32], [1]>>, "", [MemRead]>:$cu_seqlens_k,
    Arg<Optional<MemRefRankOf<[I32], [2]>>, "", [MemRead]>:$block_table,
    Arg<Variadic<AnyMemRef>, "", [MemRead]>:$captures,
    Arg<MemRefRankOf<[Attn_FloatElement], [4]>, "", [MemWrite]>:$output,
    Arg<Optional<MemRefRankOf<[F32], [3]>>, "", [MemWrite]>:$lse,
    Index:$batch, Index:$head, Index:$query_block,
    Optional<Index>:$key_split, Optional<Index>:$num_key_splits,
    Attn_KernelConfigAttr:$config,
    F32Attr:$scale,
    OptionalAttr<Attn_CausalAttr>:$causal,
    OptionalAttr<Attn_PrecisionAttr>:$precision,
    OptionalAttr<Attn_WindowAttr>:$window,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$packed_heads
  );
  let regions = (region AnyRegion:$score_mod, AnyRegion:$mask_mod);

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value (`mask` `(` $mask^ `)`)?
    (`block_map` `(` $block_map^ `)`)? (`kv_lengths` `(` $kv_lengths^ `)`)?
    (`cu_seqlens` `(` $cu_seqlens_q^ `,` $cu_seqlens_k `)`)?
    (`block_table` `(` $block_table^ `)`)?
    (`captures` `(` $captures^ `)`)? `)`
    `outs` `(` $output (`lse` `(` $lse^ `)`)? `)` `at` `[` $batch `,` $head `,` $query_block `]`
    (`key_split` `[` $key_split^ `of` $num_key_splits `]`)?
    attr-dict (`score_mod` $score_mod^)? (`mask_mod` $mask_mod^)?
    `:` type($query) `,` type($key) `,` type($value)
    (`mask` type($mask)^)? (`block_map` type($block_map)^)?
    (`kv_lengths` type($kv_lengths)^)?
    (`cu_seqlens` type($cu_seqlens_q)^ `,` type($cu_seqlens_k))?
    (`block_table` type($block_table)^)?
    (`captures` type($captures)^)? `outs` type($output)
    (`lse` type($lse)^)?
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;

  let extraClassDeclaration = [{
    /// Whether the op has a window, a softcap or a modifier region.
    bool hasVariant() {
      return getWindow() || getSoftcap() || !getScoreMod().empty() ||
             !getMaskMod().empty();
    }
  }];
}

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator,
    ParentOneOf<["AttentionOp", "BlockAttentionOp"]>]> {
  let summary = "the value of a score_mod or mask_mod region";
  let description = [{
    Ends a `score_mod` region with the modified score (f32) or a `mask_mod`
    region with whether the key is kept (i1).

    ```mlir
    attn.yield %s : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

// The pass alone, on the bufferized block-level IR of a bf16 GQA causal
// attention tiled for sm_80 (mma.sync: on sm_90a these 16-bit programs run
// on wgmma, wgmma-16bit.mlir) with 64-row programs of 4 warps:
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm \
// RUN:   | FileCheck %s --implicit-check-not="linalg." --implicit-check-not="scf.forall"

// Pipelined by --attn-pipeline with two stages, the key loops' K/V tiles
// (`attn.async_copy`) come one block ahead through cp.async into the other
// slot; with three, two blocks ahead:
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=PIPE
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=32 num-warps=4 num-stages=3" --attn-online-softmax \
// RUN:   --attn-pipeline --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=PIPE3
// RUN: attn-opt %s --attn-tile="target=sm_80 block-m=64 block-n=64 num-warps=4 num-stages=1" --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s --check-prefix=WIDE

// Key blocks as wide as the head dim (64): the rescale of acc is not put
// under a warp vote (the branch costs more than the multiplies it skips).
// WIDE:       gpu.func @gqa_kernel
// WIDE-NOT:   nvvm.vote.sync
// WIDE:       nvvm.mma.sync
// WIDE-NOT:   nvvm.vote.sync
// WIDE:       gpu.return

// Q 9216 bytes + K and V, two slots of 32 x 72 bf16 each: 4 * 4608.
// PIPE:       attn.shared_memory_bytes = 27648
// All slots of a tile as one view.
// PIPE:       memref.view {{.*}} to memref<2x32x72xbf16, #gpu.address_space<workgroup>>
// Prologue: once the slots are free, the first block's K and V into slot
// 0, each a commit group (committed even when there is no block).
// PIPE:       gpu.barrier
// PIPE:       scf.if
// PIPE:         nvvm.cp.async.shared.global {{.*}}, 16, cache = cg, {{.*}}
// PIPE:       }
// PIPE-NEXT:  nvvm.cp.async.commit.group
// PIPE:       scf.if
// PIPE:         nvvm.cp.async.shared.global
// PIPE:       }
// PIPE-NEXT:  nvvm.cp.async.commit.group
// The loop: wait for this block's tiles (no group may stay pending with two
// stages), prefetch the next block into the other slot ((iv + 1 - lb) % 2),
// then the math on slot (iv - lb) % 2.
// PIPE:       scf.for %[[IV:.*]] = {{.*}} {
// PIPE-NEXT:    nvvm.cp.async.wait.group 0
// PIPE-NEXT:    gpu.barrier
// PIPE:         arith.remui
// PIPE:         scf.if
// PIPE:           nvvm.cp.async.shared.global
// PIPE:         nvvm.cp.async.commit.group
// PIPE:         nvvm.ldmatrix
// PIPE:         nvvm.mma.sync
// PIPE:       } {attn.pipelined = 2 : i64}

// Three slots; the prologue loads two blocks (4 groups); each iteration
// leaves the 2 groups of the block after it in flight.
// PIPE3:      attn.shared_memory_bytes = 36864
// PIPE3:      memref.view {{.*}} to memref<3x32x72xbf16, #gpu.address_space<workgroup>>
// PIPE3-COUNT-4: nvvm.cp.async.commit.group
// PIPE3:      scf.for
// PIPE3-NEXT:   nvvm.cp.async.wait.group 2
// PIPE3-NEXT:   gpu.barrier
// PIPE3-COUNT-2: nvvm.cp.async.commit.group
// PIPE3:        nvvm.mma.sync
// PIPE3:      } {attn.pipelined = 3 : i64}

// The host function launches one block of 4 warps per program: grid
// (ceil(Tq / 64), Hq, B) (B a memref.dim of Q), with the kernel's dynamic
// shared memory:
// Q 64 x (64 + 8) + K, V 32 x (64 + 8) bf16 = 9216 + 4608 + 4608 bytes.
// CHECK-LABEL: func.func @gqa(
// CHECK-DAG:     %[[NQB:.*]] = arith.ceildivui %{{.*}}, %c64
// CHECK-DAG:     %[[THREADS:.*]] = arith.constant 128 : index
// CHECK-DAG:     %[[SMEM:.*]] = arith.constant 18432 : i32
// CHECK-DAG:     %[[HQ:.*]] = arith.constant 8 : index
// CHECK:         gpu.launch_func @attn_kernels::@gqa_kernel blocks in (%[[NQB]], %[[HQ]], %{{dim[_0-9]*}}) threads in (%[[THREADS]], %[[ONE:.*]], %[[ONE]]) dynamic_shared_memory_size %[[SMEM]] args(%{{.*}} : memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %{{.*}} : memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %{{.*}} : memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %{{.*}} : memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>)

// CHECK:       gpu.module @attn_kernels
// Inputs and the output with their strides (a (B, T, H, D) view needs no
// copy; the output, allocated by the host function, is cast to that layout).
// CHECK:         gpu.func @gqa_kernel(%{{.*}}: memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %{{.*}}: memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %{{.*}}: memref<?x2x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>, %{{.*}}: memref<?x8x?x64xbf16, strided<[?, ?, ?, 1], offset: ?>>) kernel
// CHECK-SAME:      attn.kernel_args = array<i32: 0, 1, 2, -1>
// CHECK-SAME:      attn.shared_memory_bytes = 18432
// CHECK-SAME:      known_block_size = array<i32: 128, 1, 1>
// Lane geometry: warp = tid / 32, lane row = lane / 4, lane column = lane % 4.
// CHECK:           %[[TID:.*]] = gpu.thread_id x
// CHECK:           %[[WARP:.*]] = arith.divui %[[TID]], %{{.*}}
// CHECK:           %[[LANE:.*]] = arith.remui %[[TID]], %{{.*}}
// Tiles in padded shared memory; S, acc and the row statistics in registers
// (one 16-row tile per warp: S 16x32 -> 16 values, acc 16x64 -> 32 values).
// CHECK:           gpu.dynamic_shared_memory
// CHECK:           memref.view {{.*}} to memref<64x72xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<32x72xbf16, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<32x72xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG:       memref.alloca() : memref<16xf32>
// CHECK-DAG:       memref.alloca() : memref<32xf32>
// CHECK-DAG:       memref.alloca() : memref<2xf32>
// Program coordinates from the block ids, in 32 bits: query block
// gridDim.x - (x + 1) (heaviest first), b = z, h = y (no division).
// CHECK:           %[[GX:.*]] = gpu.grid_dim x
// CHECK:           %[[GX32:.*]] = arith.index_castui %[[GX]] : index to i32
// CHECK:           %[[BX:.*]] = gpu.block_id x
// CHECK:           %[[BX32:.*]] = arith.index_castui %[[BX]] : index to i32
// CHECK:           %[[NEXT:.*]] = arith.addi %[[BX32]], %c1_i32 : i32
// CHECK:           %[[QB:.*]] = arith.subi %[[GX32]], %[[NEXT]] : i32
// CHECK:           arith.index_castui %[[QB]] : i32 to index
// CHECK:           %[[BZ:.*]] = gpu.block_id z
// CHECK:           arith.index_castui %[[BZ]] : index to i32
// CHECK:           %[[BY:.*]] = gpu.block_id y
// CHECK:           arith.index_castui %[[BY]] : index to i32
// CHECK-NOT:       arith.divui %{{.*}} : i32
// Q: 16-byte vector loads from global memory (zeros for rows past Tq), then
// 16-byte stores into shared memory, between barriers.
// CHECK:           gpu.barrier
// CHECK:           scf.if %{{.*}} -> (vector<8xbf16>)
// CHECK:             vector.load {{.*}} {alignment = 16 : i64} : memref<?x64xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
// CHECK:           vector.store {{.*}} {alignment = 16 : i64} : memref<64x72xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK:           gpu.barrier
// The key loop: S = Q K^T on tensor cores, operands through ldmatrix.
// CHECK:           scf.for
// CHECK:             nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK:             nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// Row max: each lane's 8 scores of a row (4 n8 tiles x 2) as a tree of
// maxima, then over the quad: two xor shuffles per row, two rows per lane.
// CHECK-COUNT-4:     arith.maximumf
// CHECK:             %[[M01:.*]] = arith.maximumf
// CHECK:             %[[M23:.*]] = arith.maximumf
// CHECK:             %[[MROW:.*]] = arith.maximumf %[[M01]], %[[M23]] : f32
// CHECK:             gpu.shuffle xor %[[MROW]], %c1_i32{{.*}} : f32
// CHECK:             gpu.shuffle xor %{{.*}}, %c2_i32{{.*}} : f32
// CHECK:             gpu.shuffle xor %{{.*}}, %c1_i32{{.*}} : f32
// CHECK:             gpu.shuffle xor %{{.*}}, %c2_i32{{.*}} : f32
// exp2 on the special-function unit.
// CHECK:             llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT:         gpu.shuffle
// acc *= alpha only when one of the warp's rows has alpha != 1 (each lane
// holds two rows of the warp's 16): a warp vote, then the 32 multiplies.
// CHECK:             %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:             arith.cmpf une, %{{.*}}, %[[ONE]] : f32
// CHECK:             arith.cmpf une, %{{.*}}, %[[ONE]] : f32
// CHECK:             %[[ANY:.*]] = nvvm.vote.sync  any %{{.*}}, %{{.*}} -> i1
// CHECK-NEXT:        scf.if %[[ANY]] {
// CHECK-COUNT-32:      arith.mulf
// CHECK-NOT:           arith.mulf
// CHECK:             }
// Then this lane's part of l (the row sum stays per lane in the loop): the
// 8 scores of each of its 2 rows added in column order, just before P V.
// CHECK-COUNT-16:    arith.addf
// CHECK-NOT:         gpu.shuffle
// P converted to bf16 in registers, fed to P V.
// CHECK:             arith.truncf %{{.*}} : f32 to bf16
// V through ldmatrix.trans.
// CHECK:             nvvm.ldmatrix %{{.*}} {{{.*}}layout = #nvvm.mma_layout<col>
// CHECK:             nvvm.mma.sync
// After the key loops, the quad sums l's 4 partials of each row once, then
// takes 1 / l (the row max's shuffles are combined by maximumf).
// CHECK-COUNT-4:   arith.addf %{{.*}}, %shuffleResult{{.*}} : f32
// CHECK-NOT:       gpu.shuffle
// CHECK:           arith.divf
// Epilogue: once no thread reads the tiles, each thread puts its output
// pairs (bf16x2) into a staging tile over them; then the block writes the
// valid rows (rows past Tq are not stored) in 16-byte vectors.
// CHECK:           %[[STAGE:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xbf16, #gpu.address_space<workgroup>>
// CHECK:           gpu.barrier
// CHECK-COUNT-16:  vector.store %{{.*}}, %[[STAGE]][{{.*}}] {alignment = 4 : i64} : memref<64x72xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK:           gpu.barrier
// CHECK:           nvvm.read.ptx.sreg.laneid
// CHECK:           scf.if
// CHECK:             %[[V:.*]] = vector.load %[[STAGE]][{{.*}}] {alignment = 16 : i64} : memref<64x72xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK:             vector.store %[[V]], %{{.*}} {alignment = 16 : i64} : memref<?x64xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
// CHECK:           gpu.return
func.func @gqa(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %v: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
  return %o : tensor<?x8x?x64xbf16>
}

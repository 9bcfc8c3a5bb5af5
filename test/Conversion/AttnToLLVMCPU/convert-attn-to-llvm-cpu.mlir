// The pass alone, on bufferized block-level IR (made by the passes before it):
// RUN: attn-opt %s --attn-tile --attn-online-softmax \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-llvm-cpu \
// RUN:   | FileCheck %s --implicit-check-not="scf." --implicit-check-not="linalg." \
// RUN:       --implicit-check-not="memref." --implicit-check-not="attn." \
// RUN:       --implicit-check-not="arith." --implicit-check-not="math." --implicit-check-not="func.func"
// The named pipeline does the same from attn.attention, with overrides:
// RUN: attn-opt %s --attn-to-llvm-cpu="block-m=8 block-n=4" | FileCheck %s --check-prefix=PIPE

// Everything is LLVM dialect; the function keeps its name and gets a C entry
// point taking descriptors by pointer (the result first).
// CHECK-LABEL: llvm.func @bf16_causal(
// CHECK-SAME:    -> !llvm.struct<(ptr, ptr, i64, array<4 x i64>, array<4 x i64>)> attributes {llvm.emit_c_interface}
// The output buffer comes from malloc.
// CHECK:         llvm.call @malloc
// Block buffers are allocated once, before the program loops (hoisted out of
// the grid): Q tile 32x64 bf16 = 2048 elements, ...
// CHECK:         llvm.alloca %{{.*}} x bf16
// The grid and the key loops are branches now.
// CHECK:         llvm.cond_br
// exp2 of the online softmax.
// CHECK:         llvm.intr.exp2
// bf16 conversions are integer arithmetic (no soft-float calls).
// CHECK-NOT:     llvm.call @__truncsfbf2
// CHECK:         llvm.func @_mlir_ciface_bf16_causal(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)

// PIPE-LABEL: llvm.func @bf16_causal(
// PIPE:         llvm.alloca %{{.*}} x bf16
// Q tile of block_m x D = 8 x 64 = 512 elements under the override.
// PIPE:         llvm.mlir.constant(512 : index)
// PIPE:         llvm.func @_mlir_ciface_bf16_causal
func.func @bf16_causal(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x1x?x64xbf16>, %v: tensor<?x1x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16> -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}

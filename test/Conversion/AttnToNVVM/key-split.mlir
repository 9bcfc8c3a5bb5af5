// Split-KV on the GPU: the split programs take the split count from the
// launch (gridDim.x, the split of a program gridDim.x - 1 - blockIdx.x), and
// the combine grid becomes a kernel launched after them: one block of 128
// threads per query row (x = row, y = head, z = batch), the threads taking
// the value columns, thread 0 the row's log-sum-exp. The 4 query heads of
// a KV head (Tq 3) are one program's 12 rows (packed_heads): grid y = Hkv.
// RUN: attn-opt %s --attn-tile="target=sm_90a" --attn-online-softmax --attn-pipeline --cse \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm | FileCheck %s

// CHECK-LABEL: func.func @decode
// CHECK:         gpu.launch_func @attn_kernels::@decode_kernel blocks in (%[[S:.*]], %c2{{.*}}, %[[B:.*]]) threads in (%c128
// CHECK:         gpu.launch_func @attn_kernels::@decode_combine blocks in (%c3, %c8{{.*}}, %{{.*}}) threads in (%c128
// CHECK:         memref.dealloc
// CHECK:         memref.dealloc

// CHECK:       gpu.func @decode_combine(
// CHECK-SAME:    attn.split_combine
// CHECK-DAG:     %[[BZ:.*]] = gpu.block_id z
// CHECK-DAG:     %[[BY:.*]] = gpu.block_id y
// CHECK-DAG:     %[[BX:.*]] = gpu.block_id x
// CHECK-DAG:     %[[TID:.*]] = gpu.thread_id x
// CHECK:         scf.for %[[D:.*]] = %[[TID]] to %c64 step %c128 {
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[BZ]], %[[BY]], %[[BX]], %[[D]]] : memref<?x8x3x64xf16
// CHECK:         } {attn.thread_loop}
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[BZ]], %[[BY]], %[[BX]]] : memref<?x8x3xf32

// CHECK:       gpu.func @decode_kernel(
// CHECK-SAME:    attn.key_splits = array<i64: 256, 264>
// CHECK:         %[[NX:.*]] = gpu.grid_dim x
// CHECK:         %[[NX32:.*]] = arith.index_castui %[[NX]] : index to i32
// CHECK:         %[[NXI:.*]] = arith.index_castui %[[NX32]] : i32 to index
// CHECK:         arith.ceildivsi %{{.*}}, %[[NXI]]
// Row r of the program is query r mod 3 of head 4 y + r / 3, in the query
// and in the split's output and log-sum-exp.
// CHECK:         %[[QV:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}, 0, 0] [1, 4, 3, 64]
// CHECK:         %[[QH:.*]] = arith.divui %[[QR:.*]], %c3{{(_[0-9]+)?}} : index
// CHECK-NEXT:    %[[QT:.*]] = arith.remui %[[QR]], %c3{{(_[0-9]+)?}} : index
// CHECK:         vector.load %[[QV]][%c0{{.*}}, %[[QH]], %[[QT]], %{{.*}}] {{.*}} : memref<1x4x3x64xf16
// CHECK:         %[[LV:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}, 0] [1, 4, 3]
// CHECK:         %[[LH:.*]] = arith.divui %[[LR:.*]], %c3{{(_[0-9]+)?}} : index
// CHECK-NEXT:    %[[LT:.*]] = arith.remui %[[LR]], %c3{{(_[0-9]+)?}} : index
// CHECK:         memref.store %{{.*}}, %[[LV]][%c0{{.*}}, %[[LH]], %[[LT]]] : memref<1x4x3xf32
// CHECK:         %[[OV:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}, 0, 0] [1, 4, 3, 64]
// CHECK:         %[[OH:.*]] = arith.divui %[[OR:.*]], %c3{{(_[0-9]+)?}} : index
// CHECK-NEXT:    %[[OT:.*]] = arith.remui %[[OR]], %c3{{(_[0-9]+)?}} : index
// CHECK:         vector.store %{{.*}}, %[[OV]][%c0{{.*}}, %[[OH]], %[[OT]], %{{.*}}] {{.*}} : memref<1x4x3x64xf32
// CHECK:         gpu.return
func.func @decode(%q: tensor<?x8x3x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x3x64xf16>, tensor<?x8x3xf32>) {
  %o, %l = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>} : tensor<?x8x3x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x3x64xf16>, tensor<?x8x3xf32>
  return %o, %l : tensor<?x8x3x64xf16>, tensor<?x8x3xf32>
}

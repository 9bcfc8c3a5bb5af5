// tf32 mma.sync operands in wide shared loads (Tf32Fragments.cpp). Q K^T
// renumbers the head dim so that one 16-byte load of a K row gives the B
// registers of two k steps; K's rows are padded by 64 bytes (a 64 x 32
// block at head dim 64: 4 k-step pairs x 4 n tiles = 16 loads). P V runs
// transposed (O^T = V^T P^T): P's registers are B as they sit and V^T's A
// registers are two 8-byte loads of V per head-dim tile and k step (4 k
// steps x 4 tiles x 2 = 32 loads); V keeps its 16-byte padding. O's
// accumulator is then transposed: the rescale by alpha shuffles each lane's
// 4 row factors in (gpu.shuffle idx), and O leaves straight from the
// registers, no staging tile and no barrier: per row of the lane (4, each
// under its bound) one 8-byte global store of 2 adjacent columns per
// head-dim tile, the 8 lanes of a row covering 64 contiguous bytes. Q is prefetched with
// cp.async together with the first K/V block: before the first loop the
// kernel waits for all of them and reads Q's 32 fragment registers.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm -cse | FileCheck %s --check-prefixes=CHECK,D48

// CHECK-LABEL: gpu.func @wide_kernel
// CHECK:         %[[Q:.*]] = memref.view %{{.*}}[%c0][] : {{.*}} to memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[K:.*]] = memref.view %{{.*}} to memref<2x32x80xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[V:.*]] = memref.view %{{.*}} to memref<2x32x68xf32, #gpu.address_space<workgroup>>
// Q's fragments are read once Q's copy (the first of three groups: Q, K and
// V of the first block) has landed.
// CHECK:         nvvm.cp.async.commit.group
// CHECK:         nvvm.cp.async.commit.group
// CHECK-NEXT:    nvvm.cp.async.commit.group
// CHECK-NEXT:    nvvm.cp.async.wait.group 2
// CHECK-NEXT:    gpu.barrier
// CHECK-COUNT-32: memref.load %[[Q]]
// CHECK-NOT:     memref.load %[[Q]]
// CHECK:         scf.for
// CHECK-NOT:       memref.load %[[K]]
// CHECK-COUNT-16:  vector.load %[[K]][{{.*}}] {alignment = 16 : i64} : memref<2x32x80xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4:   gpu.shuffle idx
// CHECK-NOT:       memref.load %[[V]]
// CHECK-COUNT-32:  vector.load %[[V]][{{.*}}] {alignment = 8 : i64} : memref<2x32x68xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT:       vector.load %[[V]]
// The diagonal blocks (f32 causal): each lane tests the block's first key
// against its 2 rows, the warp ORs them (vote), and a warp none of whose
// rows sees the block skips its Q K^T and the rest of its math (two scf.if
// on two such flags, Q K^T's marked attn.program_live, which per warp
// changes nothing); the next block's cp.async runs between them, outside.
// CHECK:         scf.for
// CHECK:           nvvm.cp.async.wait.group 0
// CHECK-NEXT:      gpu.barrier
// CHECK:           memref.store %false, %[[QKFLAG:.*]][%c0] : memref<1xi1>
// CHECK-COUNT-2:   arith.minsi
// CHECK-NOT:       arith.minsi
// CHECK:           %[[QKANY:.*]] = nvvm.vote.sync any
// CHECK-NEXT:      memref.store %[[QKANY]], %[[QKFLAG]]
// CHECK-NEXT:      %[[QKLIVE:.*]] = memref.load %[[QKFLAG]]
// CHECK-NEXT:      scf.if %[[QKLIVE]] {
// CHECK-NOT:         nvvm.cp.async.shared.global
// CHECK-COUNT-16:    vector.load %[[K]]
// CHECK-NOT:         nvvm.cp.async.shared.global
// CHECK:           }
// CHECK:           nvvm.cp.async.shared.global
// CHECK:           memref.store %false, %[[FLAG:.*]][%c0] : memref<1xi1>
// CHECK:           %[[ANY:.*]] = nvvm.vote.sync any
// CHECK-NEXT:      memref.store %[[ANY]], %[[FLAG]]
// CHECK-NEXT:      %[[LIVE:.*]] = memref.load %[[FLAG]]
// CHECK-NEXT:      scf.if %[[LIVE]] {
// CHECK-NOT:         nvvm.cp.async.shared.global
// CHECK-COUNT-4:     gpu.shuffle idx
// CHECK-COUNT-32:    vector.load %[[V]]
// CHECK-NOT:       memref.load %[[V]]
// CHECK-COUNT-4: gpu.shuffle idx
// CHECK-NOT:     vector.store %{{.*}}, %[[Q]]
// CHECK:         nvvm.cp.async.wait.group 0
// CHECK-NEXT:    nvvm.read.ptx.sreg.laneid
// CHECK-NOT:     gpu.barrier
// CHECK:         scf.if
// CHECK-COUNT-4:   vector.store %{{.*}} {alignment = 8 : i64} : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
// CHECK-NEXT:    }
// CHECK:         scf.if
// CHECK-COUNT-4:   vector.store %{{.*}} {alignment = 8 : i64} : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
// CHECK-NEXT:    }
// CHECK:         scf.if
// CHECK-COUNT-4:   vector.store %{{.*}} {alignment = 8 : i64} : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
// CHECK-NEXT:    }
// CHECK:         scf.if
// CHECK-COUNT-4:   vector.store %{{.*}} {alignment = 8 : i64} : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     vector.store
// CHECK:         gpu.return
func.func @wide(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// Head dim 48: 3 k-step pairs x 4 n tiles of K, 4 k steps x 3 head-dim
// tiles x 2 of V.
// D48-LABEL: gpu.func @d48_kernel
// D48:         %[[K:.*]] = memref.view %{{.*}} to memref<2x32x64xf32, #gpu.address_space<workgroup>>
// D48:         %[[V:.*]] = memref.view %{{.*}} to memref<2x32x52xf32, #gpu.address_space<workgroup>>
// D48:         scf.for
// D48-COUNT-12:  vector.load %[[K]]
// D48-NOT:       vector.load %[[K]]
// D48-COUNT-24:  vector.load %[[V]]{{.*}} vector<2xf32>
// D48-NOT:       vector.load %[[V]]
// D48:         scf.for
// D48-COUNT-12:  vector.load %[[K]]
// D48-COUNT-24:  vector.load %[[V]]{{.*}} vector<2xf32>
// D48-COUNT-3:  vector.store {{.*}} : memref<?x48xf32, strided<[?, 1], offset: ?>>, vector<2xf32>
// D48:         gpu.return
func.func @d48(%q: tensor<?x4x?x48xf32>, %k: tensor<?x4x?x48xf32>, %v: tensor<?x4x?x48xf32>) -> tensor<?x4x?x48xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x48xf32>, tensor<?x4x?x48xf32>, tensor<?x4x?x48xf32> -> tensor<?x4x?x48xf32>
  return %o : tensor<?x4x?x48xf32>
}

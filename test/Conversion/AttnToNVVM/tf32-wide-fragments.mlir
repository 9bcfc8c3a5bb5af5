// tf32 mma.sync operands in 16-byte shared loads (Tf32Fragments.cpp). Q K^T
// renumbers the head dim so that one load of a K row gives the B registers
// of two k steps; its rows are padded by 64 bytes (a 64 x 32 block at head
// dim 64: 4 k-step pairs x 4 n tiles = 16 loads). P V renumbers the
// accumulator's columns so that one load of a V row gives the B registers
// of 4 n tiles (4 k steps x 2 column groups x 2 rows = 16 loads); V keeps
// its 16-byte padding. O leaves through the staging tile in 16-byte
// stores (4 columns that the renumbering makes adjacent). Q is prefetched
// with cp.async together with the first K/V block: before the first loop
// the kernel waits for all of them and reads Q's 32 fragment registers.
// RUN: attn-opt %s --attn-tile="target=sm_90a block-m=64 block-n=32 num-warps=4 num-stages=2" --attn-online-softmax --attn-pipeline \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | attn-opt --convert-attn-to-nvvm -cse | FileCheck %s --check-prefixes=CHECK,D48

// CHECK-LABEL: gpu.func @wide_kernel
// CHECK:         %[[Q:.*]] = memref.view %{{.*}}[%c0][] : {{.*}} to memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[K:.*]] = memref.view %{{.*}} to memref<2x32x80xf32, #gpu.address_space<workgroup>>
// CHECK:         %[[V:.*]] = memref.view %{{.*}} to memref<2x32x68xf32, #gpu.address_space<workgroup>>
// CHECK:         nvvm.cp.async.commit.group
// CHECK:         nvvm.cp.async.commit.group
// CHECK-NEXT:    nvvm.cp.async.commit.group
// CHECK-NEXT:    nvvm.cp.async.wait.group 0
// CHECK-NEXT:    gpu.barrier
// CHECK-COUNT-32: memref.load %[[Q]]
// CHECK-NOT:     memref.load %[[Q]]
// CHECK:         scf.for
// CHECK-NOT:       memref.load %[[K]]
// CHECK-COUNT-16:  vector.load %[[K]][{{.*}}] {alignment = 16 : i64} : memref<2x32x80xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT:       memref.load %[[V]]
// CHECK-COUNT-16:  vector.load %[[V]][{{.*}}] {alignment = 16 : i64} : memref<2x32x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT:       vector.load %[[V]]
// CHECK:         scf.for
// CHECK-COUNT-16:  vector.load %[[K]]
// CHECK-COUNT-16:  vector.load %[[V]]
// CHECK-NOT:       memref.load %[[V]]
// CHECK-COUNT-8: vector.store %{{.*}}, %[[Q]][{{.*}}] {alignment = 16 : i64} : memref<64x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:         gpu.return
func.func @wide(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// Head dim 48 (not a multiple of 32): K is still read 16 bytes at a time
// (3 k-step pairs x 4 n tiles), V one register per load, and O leaves in
// pairs.
// D48-LABEL: gpu.func @d48_kernel
// D48:         %[[K:.*]] = memref.view %{{.*}} to memref<2x32x64xf32, #gpu.address_space<workgroup>>
// D48:         %[[V:.*]] = memref.view %{{.*}} to memref<2x32x52xf32, #gpu.address_space<workgroup>>
// D48:         scf.for
// D48-COUNT-12:  vector.load %[[K]]
// D48-NOT:       vector.load %[[K]]
// D48:           memref.load %[[V]]
// D48-NOT:       vector.load %[[V]]
// D48:         vector.store {{.*}} vector<2xf32>
// D48:         gpu.return
func.func @d48(%q: tensor<?x4x?x48xf32>, %k: tensor<?x4x?x48xf32>, %v: tensor<?x4x?x48xf32>) -> tensor<?x4x?x48xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x48xf32>, tensor<?x4x?x48xf32>, tensor<?x4x?x48xf32> -> tensor<?x4x?x48xf32>
  return %o : tensor<?x4x?x48xf32>
}

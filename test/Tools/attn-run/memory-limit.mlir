// Inputs larger than the memory this process may allocate are refused with
// one error line before anything is allocated: the limit is the smallest of
// the host's memory, the address space left under `ulimit -v` and the
// cgroup's memory.max, on the MLIR path and on the launch-manifest path.

func.func @g(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>
  return %o : tensor<?x?x?x16xf32>
}

// RUN: rm -rf %t && attn-run %s --target=cuda --emit-kernel=%t | FileCheck %s --check-prefix=WROTE
// WROTE: attn-run: wrote {{.*}}g.json

// The limit holds for every command after it in this file.
// RUN: ulimit -v 1500000
// RUN: not attn-run %s --target=cpu --input=1x1x40000000x16xf32 --input=1x1x1x16xf32 \
// RUN:   --input=1x1x1x16xf32 2>&1 | FileCheck %s --check-prefix=MLIR
// MLIR: attn-run: error: input #0 (q): 1x1x40000000x16xf32 needs 2.56 GB, more than the {{[0-9.]+}} GB of address space this process may still map (ulimit -v)

// RUN: not attn-run %t/g.json --input=1x1x40000000x16xf32 --input=1x1x1x16xf32 \
// RUN:   --input=1x1x1x16xf32 2>&1 | FileCheck %s --check-prefix=MANIFEST
// MANIFEST: attn-run: error: the inputs and the result (1x1x40000000x16xf32) needs 5.12 GB, more than the {{[0-9.]+}} GB of address space this process may still map (ulimit -v)

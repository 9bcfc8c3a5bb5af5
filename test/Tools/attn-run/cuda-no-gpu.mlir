// UNSUPPORTED: cuda-gpu
// Without a GPU, --target=cuda fails at once with one line: no driver
// (libcuda.so.1 missing or the toolkit's stub) or no device. --emit-kernel
// still works, and so does everything the runner checks before it needs the
// device; running the manifest fails the same way.

func.func @gqa(%q: tensor<1x4x100x64xbf16>, %k: tensor<1x2x100x64xbf16>, %v: tensor<1x2x100x64xbf16>) -> tensor<1x4x100x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x4x100x64xbf16>, tensor<1x2x100x64xbf16>, tensor<1x2x100x64xbf16> -> tensor<1x4x100x64xbf16>
  return %o : tensor<1x4x100x64xbf16>
}

// RUN: not attn-run %s --target=cuda --input=random --input=random --input=random --check 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-GPU --match-full-lines
// NO-GPU: attn-run: error: --target=cuda: {{no CUDA driver found \(libcuda.so.1 could not be loaded\)|no CUDA driver found \(libcuda.so.1 is the CUDA toolkit's stub library\)|no CUDA device present|this attn-run was built without .*}}
// RUN: not attn-run %s --target=cuda --input=random --input=random --input=random --check 2>&1 | count 1
// RUN: not attn-run %s --target=cuda --input=random --input=random --input=random > %t.stdout
// RUN: count 0 < %t.stdout

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --target=cuda --emit-kernel=%t > /dev/null
// RUN: not attn-run %t/gqa.json --input=random --input=random --input=random --check 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MANIFEST --match-full-lines
// MANIFEST: attn-run: error: {{no CUDA driver found \(libcuda.so.1 could not be loaded\)|no CUDA driver found \(libcuda.so.1 is the CUDA toolkit's stub library\)|no CUDA device present|this attn-run was built without .*}}
// RUN: not attn-run %t/gqa.json --input=random --input=random --input=random --check 2>&1 | count 1

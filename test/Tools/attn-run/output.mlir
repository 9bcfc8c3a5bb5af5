// REQUIRES: numpy
// --output writes the result as a .npy file that numpy loads; inputs may
// come from numpy; a failing run leaves no output file behind.

func.func @attn(%q: tensor<?x3x?x16xf16>, %k: tensor<?x3x?x16xf16>, %v: tensor<?x3x?x24xf16>) -> tensor<?x3x?x24xf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : tensor<?x3x?x16xf16>, tensor<?x3x?x16xf16>, tensor<?x3x?x24xf16> -> tensor<?x3x?x24xf16>
  return %o : tensor<?x3x?x24xf16>
}

// RUN: rm -f %t.o.npy
// RUN: attn-run %s --input=2x3x11x16xf16 --input=2x3x13x16xf16 --input=2x3x13x24xf16 --output=@%t.o.npy
// RUN: %python -c "import numpy as np; a = np.load('%t.o.npy'); print(a.shape, a.dtype, bool(np.isfinite(a).all()))" \
// RUN:   | FileCheck %s --check-prefix=LOAD
// LOAD: (2, 3, 11, 24) float16 True

// Inputs written by numpy; the output of top-left causal row 0 is V[.., 0, :].
// RUN: %python -c "import numpy as np; r = np.random.default_rng(0); \
// RUN:   [np.save('%t.' + n + '.npy', r.uniform(-1, 1, s).astype(np.float16)) \
// RUN:    for n, s in [('q', (1, 3, 4, 16)), ('k', (1, 3, 6, 16)), ('v', (1, 3, 6, 24))]]"
// RUN: attn-run %s --input=@%t.q.npy --input=@%t.k.npy --input=@%t.v.npy --check --output=@%t.o2.npy \
// RUN:   | FileCheck %s --check-prefix=NUMPY-IN
// NUMPY-IN: attn-run: attn on cpu: q=1x3x4x16xf16 k=1x3x6x16xf16 v=1x3x6x24xf16 -> o=1x3x4x24xf16
// NUMPY-IN-NEXT: check: PASS
// RUN: %python -c "import numpy as np; o = np.load('%t.o2.npy'); v = np.load('%t.v.npy'); \
// RUN:   print(o.shape, bool((o[:, :, 0, :] == v[:, :, 0, :]).all()))" | FileCheck %s --check-prefix=ROW0
// ROW0: (1, 3, 4, 24) True

// A failing run writes nothing, and leaves an existing file as it was.
// RUN: rm -f %t.fail.npy
// RUN: not attn-run %s --input=2x3x11x16xf16 --input=2x3x13x16xf16 --input=2x3x12x24xf16 \
// RUN:   --output=@%t.fail.npy 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: attn-run: error: the inputs do not fit attn.attention: value has shape 2x3x12x24xf16
// RUN: not ls %t.fail.npy
// RUN: echo "previous contents" > %t.keep.npy
// RUN: not attn-run %s --input=2x3x11x16xf16 --input=2x3x13x16xf32 --input=2x3x13x24xf16 \
// RUN:   --output=@%t.keep.npy 2>&1 | FileCheck %s --check-prefix=FAIL-DTYPE
// FAIL-DTYPE: attn-run: error: input #1 (k): got 2x3x13x16xf32
// RUN: FileCheck %s --check-prefix=KEEP < %t.keep.npy
// KEEP: previous contents

// A successful run replaces it.
// RUN: attn-run %s --input=2x3x11x16xf16 --input=2x3x13x16xf16 --input=2x3x13x24xf16 --output=@%t.keep.npy
// RUN: %python -c "import numpy as np; print(np.load('%t.keep.npy').shape)" | FileCheck %s --check-prefix=REPLACED
// REPLACED: (2, 3, 11, 24)

// A symbolic link is written through (its target replaced, the link kept);
// a file that is not regular (/dev/null) is written in place, not replaced.
// RUN: rm -rf %t.links && mkdir -p %t.links && ln -s target.npy %t.links/link.npy
// RUN: attn-run %s --input=1x3x4x16xf16 --input=1x3x6x16xf16 --input=1x3x6x24xf16 --output=@%t.links/link.npy
// RUN: test -L %t.links/link.npy && test -f %t.links/target.npy
// RUN: %python -c "import numpy as np; print(np.load('%t.links/link.npy').shape)" | FileCheck %s --check-prefix=LINK
// LINK: (1, 3, 4, 24)
// RUN: attn-run %s --input=1x3x4x16xf16 --input=1x3x6x16xf16 --input=1x3x6x24xf16 --output=@/dev/null
// RUN: test -c /dev/null
// RUN: ls %t.links | FileCheck %s --check-prefix=NOTEMP
// NOTEMP-NOT: tmp
// A directory given as an input is one error line.
// RUN: not attn-run %s --input=@%t.links --input=random --input=random 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: attn-run: error: input #0 (q): cannot read '{{.*}}.links': Is a directory

"""The polynomials of lm_kernels.inc's gelu_erf (erf in float, within an ulp
with fused multiply-adds), a = |z|:

  a < 0.921875:  erf(a) = a·(2/√π + s·D(s)), s = a², D of degree 5 fitted
                 to erf's series (printed: D, and the relative error of the
                 formula with D's float coefficients, in double)
  a ≥ 0.921875:  erfc(a) = e^(L(a − 2.4609375) − a²), L of degree 8 fitted
                 to log(erfc(a)·e^(a²)) over [0.921875, 4] at Chebyshev
                 nodes (L's error is erfc's relative error; past 3.92 erf
                 is 1 in float)

    python3 tests/bench/gelu_fit.py
"""
import math

import numpy as np

A1, HI = 0.921875, 4.0
MID = (A1 + HI) / 2
C0 = 2 / math.sqrt(math.pi)
k = np.arange(4000)


def d_exact(s):
    """(erf(a)/a − 2/√π)/s by erf's series, s = a²"""
    return sum(C0 * (-1) ** n / (math.factorial(n) * (2 * n + 1)) * s ** (n - 1)
               for n in range(1, 40))


def f32(c):
    return c.astype(np.float32).astype(np.float64)


s = (A1 * A1) / 2 + (A1 * A1) / 2 * np.cos(np.pi * (k + 0.5) / 4000)
D = np.polynomial.polynomial.polyfit(s, np.array([d_exact(v) for v in s]), 5)
ag = np.linspace(1e-4, A1, 50001)
approx = ag * C0 + ag * ag * ag * np.polynomial.polynomial.polyval(ag * ag, f32(D))
ref = np.array([math.erf(v) for v in ag])
c0hi = np.float32(C0)
print('2/sqrt(pi) in two parts: %.9e %.9e' % (c0hi, np.float32(C0 - float(c0hi))))
print('D:', ', '.join('%.9e' % np.float32(c) for c in D))
print("D's formula, largest relative error:", float(np.max(np.abs(approx - ref) / ref)))

b = MID + (HI - A1) / 2 * np.cos(np.pi * (k + 0.5) / 4000)
L = np.polynomial.polynomial.polyfit(
    b - MID, np.array([math.log(math.erfc(v) * math.exp(v * v)) for v in b]), 8)
bg = np.linspace(A1, HI, 20001)
lref = np.array([math.log(math.erfc(v) * math.exp(v * v)) for v in bg])
print('L:', ', '.join('%.9e' % np.float32(c) for c in L))
print("L's largest error:", float(np.max(np.abs(np.polynomial.polynomial.polyval(bg - MID, f32(L)) - lref))))

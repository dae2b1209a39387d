"""The polynomials of lm_kernels.inc's gelu_erf (erf(z) in double, then
rounded to float as libm's erff would round it):

  z < 0.5:  erf(z) = z · Q(z²), Q of erf's Taylor series (printed: its
            coefficients, and the largest error of z·Q(z²) over [0, 0.5])
  z ≥ 0.5:  erfc(z) = t · exp(−z² + P(t)), t = 1/(1 + z/2) (Numerical
            Recipes' erfcc form, refitted for double precision over z in
            [0.5, 4.5]: past 4.5 erf(z) is 1 in float), at Chebyshev nodes
            in t; P's error is erfc's relative error.

    python3 tests/bench/gelu_fit.py [P's degree] [Q's terms]
"""
import math
import sys

import numpy as np

deg = int(sys.argv[1]) if len(sys.argv) > 1 else 12
terms = int(sys.argv[2]) if len(sys.argv) > 2 else 10
z0, z1 = 0.5, 4.5
a, b = 1 / (1 + z1 / 2), 1 / (1 + z0 / 2)
k = np.arange(4000)
tn = (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / 4000)
z = 2 * (1 / tn - 1)
P = np.array([math.log(math.erfc(zz) / tt) + zz * zz for zz, tt in zip(z, tn)])
coef = np.polynomial.chebyshev.Chebyshev.fit(tn, P, deg).convert(kind=np.polynomial.Polynomial).coef
zg = np.linspace(z0, z1, 20001)
tg = 1 / (1 + zg / 2)
Pe = np.zeros_like(tg)
for c in coef[::-1]:
    Pe = Pe * tg + c
ref = np.array([math.log(math.erfc(x) / t) + x * x for x, t in zip(zg, tg)])
print("P:", ", ".join(repr(float(c)) for c in coef))
print("P's largest error", float(np.max(np.abs(Pe - ref))))
# erf(z) = 2/sqrt(pi) · Σ (−1)^n z^(2n+1) / (n! (2n+1))
q = [2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(terms)]
print("Q:", ", ".join(repr(c) for c in q))
zs = np.linspace(0, z0, 5001)
worst = max(abs(x * sum(c * x ** (2 * i) for i, c in enumerate(q)) - math.erf(x)) / max(math.erf(x), 1e-300)
            for x in zs[1:])
print("z·Q(z²)'s largest relative error", worst)

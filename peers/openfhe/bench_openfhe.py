"""OpenFHE 1.6.1 peer for `tessera bench hmult|hrot|bootstrap --params ark`.

Bootstrapping (`--op bootstrap`) uses the settings of OpenFHE's `simple-ckks-bootstrapping`
example (FLEXIBLEAUTO rescaling, 59-bit scaling and 60-bit first moduli) at 128-bit classic
security with ring dimension 2^16 and full packing (2^15 slots). With a uniform ternary secret
OpenFHE refuses N = 2^16 for any useful depth (it asks for 2^17), so the secret is
SPARSE_ENCAPSULATED: a dense user secret with an ephemeral sparse one for ModRaise, the same
technique as Tessera's. The level budget is [3, 3] by default (ARK's and Tessera's ark split),
with 8 levels left after bootstrapping. It reports the median time of EvalBootstrap and the precision (-log2 of the mean and
of the max absolute error) over real slots uniform in [-1, 1].

Closest parameters to Tessera's `ark` preset: ring dimension 2^16, multiplicative depth 23
(24 chain primes), 60-bit first modulus, 50-bit scaling moduli, hybrid key switching with 4
digits (numLargeDigits), manual rescaling (FIXEDMANUAL, so HMult = EvalMult with
relinearisation + ModReduce, as Tessera measures it), full packing (2^15 slots), 128-bit
classical security, uniform ternary secret. OpenFHE chooses its own special primes.

Usage (CPython 3.10 with `pip install openfhe==1.6.1.0.22.4`):
    OMP_NUM_THREADS=2 python bench_openfhe.py --op hmult --reps 7
Prints one JSON line per measurement.
"""

import argparse
import json
import os
import random
import statistics
import time

import openfhe as of


def context():
    p = of.CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(23)
    p.SetScalingModSize(50)
    p.SetFirstModSize(60)
    p.SetRingDim(1 << 16)
    p.SetBatchSize(1 << 15)
    p.SetNumLargeDigits(4)
    p.SetKeySwitchTechnique(of.HYBRID)
    p.SetScalingTechnique(of.FIXEDMANUAL)
    p.SetSecurityLevel(of.HEStd_128_classic)
    p.SetSecretKeyDist(of.UNIFORM_TERNARY)
    cc = of.GenCryptoContext(p)
    for feature in (of.PKESchemeFeature.PKE, of.PKESchemeFeature.KEYSWITCH, of.PKESchemeFeature.LEVELEDSHE):
        cc.Enable(feature)
    return cc


def bootstrap(reps, level_budget):
    p = of.CCParamsCKKSRNS()
    p.SetSecretKeyDist(of.SPARSE_ENCAPSULATED)
    p.SetSecurityLevel(of.HEStd_128_classic)
    p.SetRingDim(1 << 16)
    p.SetScalingTechnique(of.FLEXIBLEAUTO)
    p.SetScalingModSize(59)
    p.SetFirstModSize(60)
    depth = 8 + of.CryptoContext.GetBootstrapDepth(level_budget, of.SPARSE_ENCAPSULATED)
    p.SetMultiplicativeDepth(depth)
    # 25 towers at 59 bits fit 128-bit security at N = 2^16 only with small special moduli:
    # 9 digits is the smallest count OpenFHE accepts here (5 and 7 exceed the bound; 6 and 8
    # do not divide the towers evenly).
    p.SetNumLargeDigits(9)
    p.SetBatchSize(1 << 15)
    cc = of.GenCryptoContext(p)
    for feature in (of.PKESchemeFeature.PKE, of.PKESchemeFeature.KEYSWITCH,
                    of.PKESchemeFeature.LEVELEDSHE, of.PKESchemeFeature.ADVANCEDSHE,
                    of.PKESchemeFeature.FHE):
        cc.Enable(feature)
    slots = 1 << 15
    cc.EvalBootstrapSetup(level_budget, [0, 0], slots)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    cc.EvalBootstrapKeyGen(keys.secretKey, slots)
    rng = random.Random(1)
    x = [rng.uniform(-1, 1) for _ in range(slots)]
    pt = cc.MakeCKKSPackedPlaintext(x, 1, depth - 1, None, slots)
    ct = cc.Encrypt(keys.publicKey, pt)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        out = cc.EvalBootstrap(ct)
        times.append(time.perf_counter() - start)
    dec = cc.Decrypt(keys.secretKey, out)
    dec.SetLength(slots)
    got = dec.GetRealPackedValue()
    errs = [abs(a - b) for a, b in zip(got, x)]
    import math
    print(json.dumps({
        "op": "bootstrap", "impl": "openfhe-1.6.1",
        "params": "n16-sparse-encapsulated-budget-%d-%d" % tuple(level_budget),
        "threads": int(os.environ.get("OMP_NUM_THREADS", "0")),
        "median_s": statistics.median(times), "min_s": min(times), "reps": reps,
        "ring_dim": cc.GetRingDimension(), "depth": depth,
        "levels_left": depth - out.GetLevel() - 1 if hasattr(out, "GetLevel") else None,
        "precision_bits": -math.log2(sum(errs) / len(errs)),
        "max_error_bits": -math.log2(max(errs)),
    }))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", choices=["hmult", "hrot", "bootstrap"], required=True)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--level-budget", type=int, nargs=2, default=[3, 3])
    args = ap.parse_args()
    if args.op == "bootstrap":
        bootstrap(args.reps, list(args.level_budget))
        return
    cc = context()
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    cc.EvalRotateKeyGen(keys.secretKey, [1])
    rng = random.Random(1)
    x = [rng.uniform(-1, 1) for _ in range(1 << 15)]
    ct = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(x))
    times = []
    for _ in range(args.reps):
        start = time.perf_counter()
        if args.op == "hmult":
            out = cc.ModReduce(cc.EvalMult(ct, ct))
        else:
            out = cc.EvalRotate(ct, 1)
        times.append(time.perf_counter() - start)
    pt = cc.Decrypt(keys.secretKey, out)
    pt.SetLength(8)
    got = pt.GetRealPackedValue()
    want = [v * v for v in x[:8]] if args.op == "hmult" else x[1:9]
    err = max(abs(a - b) for a, b in zip(got, want))
    print(json.dumps({
        "op": args.op, "impl": "openfhe-1.6.1", "params": "ark-closest",
        "threads": int(os.environ.get("OMP_NUM_THREADS", "0")),
        "median_s": statistics.median(times), "min_s": min(times), "reps": args.reps,
        "ring_dim": cc.GetRingDimension(), "max_abs_error_first8": err,
    }))


if __name__ == "__main__":
    main()

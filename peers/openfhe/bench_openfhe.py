"""OpenFHE 1.6.1 peer for `tessera bench hmult|hrot --params ark`.

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--op", choices=["hmult", "hrot"], required=True)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
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

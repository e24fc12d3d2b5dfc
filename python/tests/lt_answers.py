"""Answers cuda/cublaslt's TestAlgosMatchPython: reads a JSON list of
products ({M, N, K, Batch, StrideA, StrideD, SMTarget, DType}) on stdin and
writes {"version": cuBLASLt's version, "keys": each product's ranked
algorithms (Plan.algo_keys)}, from a torch process as symmtune.torch runs."""
from __future__ import annotations

import json
import sys

import torch

from symmtune import _cublaslt


def main() -> None:
    torch.cuda.init()  # cuBLASLt is then torch's, as in symmtune.torch
    keys = []
    for q in json.load(sys.stdin):
        p = _cublaslt.Plan(0, q["M"], q["N"], q["K"], q["DType"], batch=q["Batch"], stride_a=q["StrideA"],
                           stride_d=q["StrideD"], sm_target=q["SMTarget"])
        keys.append(p.algo_keys())
        p.close()
    json.dump({"version": _cublaslt.version(), "keys": keys}, sys.stdout)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes an SWF trace for the federation benchmark of issue 25 (item 2):
jobs of 1, 2, 4 or 8 processors and, for a share of them (2 % by
default), 16 processors: wider than any execution cluster of
`mcfed replay --hosts 8 --clusters 10`, so those jobs fit nowhere.

Usage: fit-nowhere-trace.py JOBS OUTPUT [--processors 80] [--load 0.75]
       [--nowhere 0.02] [--seed 1]

Run times are uniform in 10..600 s; arrivals are Poisson, aimed at LOAD of
PROCESSORS by the jobs that can run. SWF: 18 whitespace-separated fields
(crates/trace/src/swf.rs).
"""
import argparse
import random

parser = argparse.ArgumentParser()
parser.add_argument("jobs", type=int)
parser.add_argument("output")
parser.add_argument("--processors", type=int, default=80)
parser.add_argument("--load", type=float, default=0.75)
parser.add_argument("--nowhere", type=float, default=0.02)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()

rng = random.Random(args.seed)
fitting = [(1, 0.5), (2, 0.5 / 3), (4, 0.5 / 3), (8, 0.5 / 3)]
mean_width = sum(width * share for width, share in fitting)
mean_run = (10 + 600) / 2
# Processor-seconds per second the runnable jobs bring, over the load aimed at.
rate = args.load * args.processors / (mean_width * mean_run * (1 - args.nowhere))
now = 0.0
with open(args.output, "w") as out:
    out.write(f"; MaxProcs: {args.processors}\n")
    out.write(f"; Note: fit-nowhere-trace.py seed {args.seed} load {args.load} nowhere {args.nowhere}\n")
    for number in range(1, args.jobs + 1):
        now += rng.expovariate(rate)
        if rng.random() < args.nowhere:
            width = 16
        else:
            pick = rng.random()
            width = 8
            for candidate, share in fitting:
                if pick < share:
                    width = candidate
                    break
                pick -= share
        run = rng.randint(10, 600)
        user = rng.randint(1, 20)
        out.write(
            f"{number} {int(now)} -1 {run} {width} -1 -1 {width} {run} -1 1 {user} -1 -1 -1 -1 -1 -1\n"
        )

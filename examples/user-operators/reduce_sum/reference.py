#!/usr/bin/env python3
"""The reference of reduce_sum: varex calls it with --rows N --values FILE --sum FILE; it reads the column
(little-endian int32) and writes the sum modulo 2^32 as one little-endian uint32. Plain Python, no numpy."""
import argparse
import array
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, required=True)
parser.add_argument("--values", required=True)
parser.add_argument("--sum", required=True)
args = parser.parse_args()

column = array.array("i")
with open(args.values, "rb") as f:
    column.frombytes(f.read())
if sys.byteorder != "little":
    column.byteswap()
assert len(column) == args.rows, (len(column), args.rows)
result = array.array("I", [sum(column) % 2**32])
if sys.byteorder != "little":
    result.byteswap()
with open(args.sum, "wb") as f:
    f.write(result.tobytes())

"""Core: the primitives every benchmark uses (errors, paths, text, file I/O, journal, statistics,
the judge, answer extraction, frame plans, video decoding). Nothing here imports anything of the
package outside core."""

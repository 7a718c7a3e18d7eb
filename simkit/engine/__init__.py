"""The engine: system-agnostic chunking, seeding, worker threads and Dask."""

from simkit.engine.core import (
    CHUNK_ROUNDS,
    Job,
    RawRun,
    RngLike,
    block_rounds,
    block_totals,
    chunk_rounds,
    chunk_sizes,
    default_workers,
    layout_for,
    play_blocks,
    prepare,
    seed_sequence,
    seed_value,
    simulate,
    system_of,
)

__all__ = [
    "CHUNK_ROUNDS",
    "Job",
    "RawRun",
    "RngLike",
    "block_rounds",
    "block_totals",
    "chunk_rounds",
    "chunk_sizes",
    "default_workers",
    "layout_for",
    "play_blocks",
    "prepare",
    "seed_sequence",
    "seed_value",
    "simulate",
    "system_of",
]

"""Poisson samples staged on the Dask workers' local disks.

On data read at every pass, one pass draws the rows of a whole window of
steps (about an epoch), which the client then consumes chunk by chunk.
Those rows are about as many values as the data, so they wait on the
workers' disks.  Each block's task writes its rows of every chunk to one
file in its worker's local directory and returns where each chunk's rows
lie in it; for each chunk, one task per worker then reads that chunk's
rows of all its blocks back.  A window costs ``n_blocks + n_workers *
n_chunks`` tasks, linear in the number of rows, where a Dask key per
(block, chunk) would cost ``n_blocks * n_chunks`` keys, quadratic.

A block's rows of a chunk are one contiguous span of its file: the step
counts (int64), the targets and the row bounds (float64), then the rows of
X (X's dtype), so that every part starts at a multiple of 8 bytes.
"""

import os
import shutil

import numpy as np


def stage_block(sample, directory, block_index):
    """Write one block's drawn rows, chunk by chunk, to this worker's disk.

    ``sample`` is :func:`dask_backend._block_sample`'s list of
    ``(X_rows, y_rows, limits, counts)``, one per chunk of the window.

    Returns ``(address, path, starts, rows)``: the worker holding the file,
    its path, where chunk i's span starts (``starts[i]:starts[i + 1]``) and
    how many rows it holds.
    """
    from distributed import get_worker

    worker = get_worker()
    folder = os.path.join(worker.local_directory, directory)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{block_index}.bin")
    starts = np.zeros(len(sample) + 1, dtype=np.int64)
    rows = np.empty(len(sample), dtype=np.int64)
    with open(path, "wb") as f:
        for i, (X_rows, y_rows, limits, counts) in enumerate(sample):
            for part in (np.asarray(counts, dtype=np.int64),
                         np.asarray(y_rows, dtype=np.float64),
                         np.asarray(limits, dtype=np.float64),
                         np.ascontiguousarray(X_rows)):
                part.tofile(f)
            rows[i], starts[i + 1] = len(y_rows), f.tell()
    return worker.address, path, starts, rows


def read_staged(entries, chunk):
    """Chunk ``chunk``'s spans of the blocks ``entries`` staged here.

    ``entries`` lists ``(block_index, (address, path, starts, rows))``.
    Returns ``(blocks, rows, ends, data)``: the spans one after another in
    one byte array (one buffer crosses the network about three times as
    fast as a list of them), span i ending at ``ends[i]``, with
    ``rows[i]`` rows of block ``blocks[i]`` (see :func:`unpack`).  The
    task runs only on the worker that wrote the files.
    """
    sizes = np.array([where[2][chunk + 1] - where[2][chunk] for _, where in entries],
                     dtype=np.int64)
    ends = np.cumsum(sizes)
    data = np.empty(int(ends[-1]) if len(ends) else 0, dtype=np.uint8)
    for (_, (_, path, starts, _)), end, size in zip(entries, ends, sizes,
                                                    strict=True):
        with open(path, "rb") as f:
            f.seek(int(starts[chunk]))
            f.readinto(memoryview(data)[end - size:end])
    blocks = np.array([block for block, _ in entries], dtype=np.int64)
    rows = np.array([where[3][chunk] for _, where in entries], dtype=np.int64)
    return blocks, rows, ends, data


def unpack(read, n_steps, n_features, dtype):
    """``[(block_index, (X_rows, y_rows, limits, counts)), ...]`` of a
    :func:`read_staged` result, views of its bytes."""
    blocks, rows, ends, data = read
    pieces = []
    for block, n_rows, end in zip(blocks, rows, ends, strict=True):
        cut = end - np.cumsum([n_rows * n_features * np.dtype(dtype).itemsize,
                               8 * n_rows, 8 * n_rows, 8 * n_steps])[::-1]
        pieces.append((int(block), (
            data[cut[3]:end].view(dtype).reshape(n_rows, n_features),
            data[cut[1]:cut[2]].view(np.float64),
            data[cut[2]:cut[3]].view(np.float64),
            data[cut[0]:cut[1]].view(np.int64))))
    return pieces


def remove_staged(directory, dask_worker=None):
    """Delete a window's files from a worker (run by ``Client.run``)."""
    shutil.rmtree(os.path.join(dask_worker.local_directory, directory),
                  ignore_errors=True)

"""Fake `libero.libero` (tests only): get_libero_path over $IMEP_FAKE_LIBERO_ROOT."""

import os


def get_libero_path(query_key):
    root = os.environ["IMEP_FAKE_LIBERO_ROOT"]
    paths = {
        "benchmark_root": root,
        "bddl_files": os.path.join(root, "bddl_files"),
        "init_states": os.path.join(root, "init_files"),
        "datasets": os.path.join(root, "datasets"),
        "assets": os.path.join(root, "assets"),
    }
    return paths[query_key]

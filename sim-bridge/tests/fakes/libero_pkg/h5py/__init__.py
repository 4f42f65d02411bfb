"""Fake `h5py` (tests only): `File(path, "r")` over an .npz archive keyed `data/demo_<n>/actions|states`."""

import numpy as np


class Dataset:
    def __init__(self, array):
        self._a = array

    def __getitem__(self, key):
        assert key == (), "the adapter reads whole datasets with [()]"
        return self._a.copy()


class Group:
    def __init__(self, arrays, prefix):
        self._arrays = arrays
        self._prefix = prefix

    def keys(self):
        children = {k[len(self._prefix) :].split("/")[0] for k in self._arrays if k.startswith(self._prefix)}
        return sorted(children)

    def __getitem__(self, key):
        full = self._prefix + key
        if full in self._arrays:
            return Dataset(self._arrays[full])
        if any(k.startswith(full + "/") for k in self._arrays):
            return Group(self._arrays, full + "/")
        raise KeyError(f"Unable to open object (object '{key}' doesn't exist)")


class File(Group):
    def __init__(self, name, mode="r"):
        assert mode == "r"
        with np.load(name, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        super().__init__(arrays, "")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        pass

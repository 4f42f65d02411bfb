"""Fake `libero.libero` (tests only): get_libero_path over $IMEP_FAKE_LIBERO_ROOT, and LIBERO's import-time
config step (libero/libero/__init__.py @ 8f1084e3): when `$LIBERO_CONFIG_PATH/config.yaml` (default
`~/.libero/config.yaml`) does not exist, importing this module asks on stdin for a dataset folder and then
writes the file (stdin closed: EOFError "EOF when reading a line"). Tests must set LIBERO_CONFIG_PATH: the
fake refuses to touch the home directory."""

import os

if "LIBERO_CONFIG_PATH" not in os.environ:
    raise AssertionError("[fake] tests must set LIBERO_CONFIG_PATH (the fake never writes ~/.libero)")

# This is a default path for localizing all the benchmark related files
libero_config_path = os.environ.get("LIBERO_CONFIG_PATH", os.path.expanduser("~/.libero"))
config_file = os.path.join(libero_config_path, "config.yaml")


def get_default_path_dict(custom_location=None):
    root = os.path.dirname(os.path.abspath(__file__)) if custom_location is None else custom_location
    return {
        "benchmark_root": root,
        "bddl_files": os.path.join(root, "./bddl_files"),
        "init_states": os.path.join(root, "./init_files"),
        "datasets": os.path.join(root, "../datasets"),
        "assets": os.path.join(root, "./assets"),
    }


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


if not os.path.exists(libero_config_path):
    os.makedirs(libero_config_path)

if not os.path.exists(config_file):
    # Create a default config file (upstream: the same prompts, then yaml.dump)
    default_path_dict = get_default_path_dict()
    answer = input("Do you want to specify a custom path for the dataset folder? (Y/N): ").lower()
    if answer == "y":
        custom_dataset_path = input("Enter the path where you want to store the datasets: ")
        full_custom_dataset_path = os.path.join(os.path.abspath(os.path.expanduser(custom_dataset_path)), "datasets")
        confirm_answer = input().lower()
        if confirm_answer == "y":
            default_path_dict["datasets"] = full_custom_dataset_path
    with open(config_file, "w") as f:
        f.write("".join(f"{k}: {v}\n" for k, v in sorted(default_path_dict.items())))

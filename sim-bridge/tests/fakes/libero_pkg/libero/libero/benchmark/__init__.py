"""Fake `libero.libero.benchmark` (tests only): LIBERO-90's first 12 tasks, in libero_suite_task_map order."""

import os
from typing import NamedTuple

from libero.libero import get_libero_path

LIBERO_90_HEAD = [
    "KITCHEN_SCENE10_close_the_top_drawer_of_the_cabinet",
    "KITCHEN_SCENE10_close_the_top_drawer_of_the_cabinet_and_put_the_black_bowl_on_top_of_it",
    "KITCHEN_SCENE10_put_the_black_bowl_in_the_top_drawer_of_the_cabinet",
    "KITCHEN_SCENE10_put_the_butter_at_the_back_in_the_top_drawer_of_the_cabinet_and_close_it",
    "KITCHEN_SCENE10_put_the_butter_at_the_front_in_the_top_drawer_of_the_cabinet_and_close_it",
    "KITCHEN_SCENE10_put_the_chocolate_pudding_in_the_top_drawer_of_the_cabinet_and_close_it",
    "KITCHEN_SCENE1_open_the_bottom_drawer_of_the_cabinet",
    "KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet",
    "KITCHEN_SCENE1_open_the_top_drawer_of_the_cabinet_and_put_the_bowl_in_it",
    "KITCHEN_SCENE1_put_the_black_bowl_on_the_plate",
    "KITCHEN_SCENE1_put_the_black_bowl_on_top_of_the_cabinet",
    "KITCHEN_SCENE2_open_the_top_drawer_of_the_cabinet",
]


class Task(NamedTuple):
    name: str
    language: str
    problem: str
    problem_folder: str
    bddl_file: str
    init_states_file: str


def grab_language_from_filename(x):
    if x[0].isupper():
        if "SCENE10" in x:
            language = " ".join(x[x.find("SCENE") + 8 :].split("_"))
        else:
            language = " ".join(x[x.find("SCENE") + 7 :].split("_"))
    else:
        language = " ".join(x.split("_"))
    en = language.find(".bddl")
    return language[:en]


class LIBERO_90:
    def __init__(self, task_order_index=0):
        assert task_order_index == 0, "[error] currently only support task order for 10-task suites"
        self.task_order_index = task_order_index
        self.name = "libero_90"
        self.tasks = [
            Task(n, grab_language_from_filename(n + ".bddl"), "Libero", "libero_90", f"{n}.bddl", f"{n}.pruned_init") for n in LIBERO_90_HEAD
        ]
        self.n_tasks = len(self.tasks)

    def get_num_tasks(self):
        return self.n_tasks

    def get_task(self, i):
        return self.tasks[i]

    def get_task_demonstration(self, i):
        assert 0 <= i and i < self.n_tasks, f"[error] task number {i} is outer of range {self.n_tasks}"
        return f"{self.tasks[i].problem_folder}/{self.tasks[i].name}_demo.hdf5"

    def get_task_bddl_file_path(self, i):
        return os.path.join(get_libero_path("bddl_files"), self.tasks[i].problem_folder, self.tasks[i].bddl_file)


def get_benchmark_dict(help=False):
    return {"libero_90": LIBERO_90}

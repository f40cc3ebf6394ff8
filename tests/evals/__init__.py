"""Tests of local2 eval: sets, runner, grading, results."""

"""Tests of watches: schedules, runs, what changed, notices."""

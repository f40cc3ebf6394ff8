"""Tests of a chat turn: graph, answer, approvals, checkpoints, time travel, critic."""

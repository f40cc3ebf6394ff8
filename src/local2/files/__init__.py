"""Local knowledge: the file sandbox, the search_files index and the per-turn audit log."""

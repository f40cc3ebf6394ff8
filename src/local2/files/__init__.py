"""Local knowledge: the file sandbox and the search_files index."""

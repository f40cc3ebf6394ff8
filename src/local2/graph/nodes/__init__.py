"""The graph's nodes: each a small function of (state, services) with one job."""

"""Tests of the app (Gradio), most against the real server in chromium."""

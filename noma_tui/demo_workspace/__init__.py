"""The demo workspace shipped with the app (data, not code).

A package only so setuptools ships its files as package data; `noma_tui.demo` copies
everything here except this file into the user's data dir, and `noma_tui.demo_build`
regenerates it.
"""

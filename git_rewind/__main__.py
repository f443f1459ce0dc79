"""`python -m git_rewind` runs the command line."""

from .main import main

main()

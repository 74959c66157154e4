"""Real data bundled with cosched, each file with its provenance and licence in README.txt."""

import sys

from cosched.cli import main

sys.exit(main())

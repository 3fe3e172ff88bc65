"""python3 -m fake_cognito ... (or python3 Tests/integration/fake_cognito ...)."""

import os
import sys

if __package__ in (None, ""):
    # Run as a directory: make the package importable by its name.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    from fake_cognito import main
else:
    from . import main

sys.exit(main())

"""What the tests share that is neither a test nor a fixture: helpers any folder's tests import
(``tests/<feature>/helpers.py`` holds what one feature's tests share). No test module imports
another (tests/house/test_test_layout.py); fixtures are in the conftest files."""

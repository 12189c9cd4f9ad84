"""Order of the example gallery: the quickstart first, then by file name."""


class QuickstartFirst:
    """sphinx-gallery sort key: ``quickstart.py`` first, then alphabetical."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        return (filename != "quickstart.py", filename)

    def __repr__(self):
        return f"<{type(self).__name__}>"

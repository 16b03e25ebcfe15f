"""A sphinx-gallery image scraper for figures the examples save to files.

``examples/pareto_frontier_plot.py`` saves each figure into ``$FAIRDECIDE_FIGURES`` and
closes it, so matplotlib's scraper finds no open figure. This one shows in the gallery
the PNG files written there since the previous code block. docs/conf.py points
``FAIRDECIDE_FIGURES`` at a scratch folder, so nothing lands in the source tree.

It lives in a module (not in conf.py) so that sphinx-gallery can name it by a string and
Sphinx can pickle the configuration.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

_SEEN: set[str] = set()


def scraper(block, block_vars, gallery_conf) -> str:
    """Copy the new PNG files of $FAIRDECIDE_FIGURES to the gallery's image paths."""
    from sphinx_gallery.scrapers import figure_rst

    folder = os.environ.get("FAIRDECIDE_FIGURES")
    if not folder or not Path(folder).is_dir():
        return ""
    new = sorted((f for f in Path(folder).glob("*.png") if str(f) not in _SEEN),
                 key=lambda f: f.stat().st_mtime)
    paths = []
    for figure, target in zip(new, block_vars["image_path_iterator"], strict=False):
        _SEEN.add(str(figure))
        shutil.copyfile(figure, target)
        paths.append(target)
    return figure_rst(paths, gallery_conf["src_dir"])

"""The installed layout as symbolic links (cosched._layout), which mypy and the API docs read."""

from __future__ import annotations

import shutil
from pathlib import Path

from cosched._areas import AREAS
from cosched._layout import installed_folders, link_layout, repository_folders

ROOT = Path(__file__).resolve().parents[2]


def test_installed_folders_are_the_repository_in_an_editable_install():
    # the test suite runs against an editable install of this checkout
    assert installed_folders() == repository_folders(ROOT)


def test_the_layout_links_every_area_inside_cosched_and_copies_nothing(tmp_path):
    root = link_layout(tmp_path, repository_folders(ROOT))
    package = root / "cosched"
    assert package.is_dir() and not package.is_symlink()
    for area in AREAS:
        link = package / area
        assert link.is_symlink() and link.resolve() == (ROOT / area).resolve()
        assert (link / "__init__.py").is_file()
    for path in (ROOT / "cosched").iterdir():
        if path.name != "__pycache__":
            assert (package / path.name).is_symlink()
    assert not (package / "__pycache__").exists()
    assert not any(path.is_file() and not path.is_symlink() for path in package.iterdir()), (
        "a file was copied instead of linked"
    )


def test_removing_the_layout_keeps_the_sources(tmp_path):
    sources = tmp_path / "sources"
    (sources / "cosched").mkdir(parents=True)
    (sources / "cosched" / "__init__.py").write_text("")
    for area in AREAS:
        (sources / area).mkdir()
        (sources / area / "__init__.py").write_text("")
    layout = tmp_path / "layout"
    layout.mkdir()
    link_layout(layout, repository_folders(sources))
    assert (layout / "cosched" / "theory" / "__init__.py").is_file()
    shutil.rmtree(layout)
    assert all((sources / area / "__init__.py").is_file() for area in AREAS)
    assert (sources / "cosched" / "__init__.py").is_file()

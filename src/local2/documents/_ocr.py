"""OCR of pages with no text layer: RapidOCR 3.10 on onnxruntime, models inside its package.

The optional ``ocr`` extra (``pip install 'local2[ocr]'``) pins ``rapidocr==3.10.0``: its
wheel ships PP-OCRv6 small detection and recognition and the v2.0 angle classifier, under
Apache-2.0, and runs on onnxruntime (already here for Chroma) and headless OpenCV, so no
Debian library is needed. It fetches a model only when one is missing or not the default;
here the shipped files are named explicitly and its downloader is disabled, so reading
never touches the network. (rapidocr-onnxruntime 1.4.4 is its final release, stops at
Python 3.12 and needs Debian's libGL; Tesseract is a Debian package, not an extra.)
"""

from __future__ import annotations

import importlib.util
import logging
import os
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from local2.bounded import headroom
from local2.errors import OcrUnavailable

OCR_PACKAGE = "rapidocr"
MODEL_FILES = {
    "Det": "PP-OCRv6_det_small.onnx",
    "Cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
    "Rec": "PP-OCRv6_rec_small.onnx",
}
INSTALL_HINT = (
    "To read them, install the OCR extra (pip install 'local2[ocr]', or scripts/setup.sh "
    "--ocr) and add the document again."
)


def ocr_installed() -> bool:
    """Whether the OCR extra is installed (checked without importing it)."""
    return all(importlib.util.find_spec(name) for name in (OCR_PACKAGE, "onnxruntime"))


def _refuse_download(*args: object, **kwargs: object) -> None:
    raise OcrUnavailable(
        "a model is missing from the rapidocr package (no download at run time)", INSTALL_HINT
    )


class PageOcr:
    """The engine, loaded on first use (about 1 s, 70 MB) and kept for the next pages.

    In a bounded worker, ``room()`` lets OCR use ``memory_mb`` more than the worker uses
    when it starts (the model and one page's image: 400-600 MB at 150 dpi).
    """

    def __init__(self, memory_mb: float | None = None) -> None:
        self._engine: Any = None  # rapidocr.RapidOCR: its call's output is a union of stages
        self.memory_mb = memory_mb

    @property
    def loaded(self) -> bool:
        return self._engine is not None

    def room(self) -> AbstractContextManager[None]:

        return headroom(self.memory_mb)

    def _load(self) -> Any:
        if not ocr_installed():
            raise OcrUnavailable("the OCR extra is not installed", INSTALL_HINT)
        # rapidocr: the optional OCR extra, absent by default
        import rapidocr

        # lazy: rapidocr, numpy: ~288 ms, 337 modules at import
        from rapidocr.utils import download_file

        # a missing model file is refused, never fetched (DownloadFile.run is a classmethod)
        download_file.DownloadFile.run = _refuse_download  # type: ignore[method-assign]  # no network
        models = Path(rapidocr.__file__).parent / "models"
        params: dict[str, str | int] = {
            "Global.log_level": "error",
            "EngineConfig.onnxruntime.intra_op_num_threads": min(2, os.cpu_count() or 1),
        }
        for stage, name in MODEL_FILES.items():
            if not (models / name).is_file():
                raise OcrUnavailable(f"the rapidocr package has no {name}", INSTALL_HINT)
            params[f"{stage}.model_path"] = str(models / name)
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        return rapidocr.RapidOCR(params=params)

    def read(self, bgr_image: Any) -> str:
        """The text lines found in a page image (H×W×3, BGR, as pdfium renders), top down."""
        if self._engine is None:
            self._engine = self._load()
        result = self._engine(bgr_image)
        return "\n".join(str(t) for t in (result.txts or ()))

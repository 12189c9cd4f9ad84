"""Warnings and errors that skdpopt raises about privacy and utility."""


class PrivacyLeakWarning(UserWarning):
    """Something about the fit is read from the private data without noise.

    For example a label set taken from ``y`` when ``classes=`` was not
    given: the released model then reveals which labels occur.  Declare the
    quantity public (``classes=``, ``groups=``, ``domain=``) to silence it.
    """

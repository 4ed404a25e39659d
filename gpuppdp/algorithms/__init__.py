"""Anonymization beyond full-domain generalization, each a class configured with its
parameters whose ``fit(data)`` returns the release (as :class:`gpuppdp.Anonymizer`):

* :class:`Mondrian` -- multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan 2006);
* :class:`TDS` -- top-down specialization, TDS (Fung, Wang & Yu 2005) and HDTDS for
  LKC-privacy (Mohammed et al. 2009);
* :class:`Anatomy` -- the QIDs and the sensitive values in two tables (Xiao & Tao 2006);
* :class:`KMinimalGeneralizations` -- Samarati's k-minimal generalizations (2001);
* :class:`Negotiation` -- the UBNB-PPDD negotiation of a release (Afifi et al. 2018).
"""

from .anatomy import AnatomizedRelease, Anatomy
from .kminimal import KMinimalGeneralizations
from .mondrian import Mondrian, MondrianRelease
from .negotiation import Negotiation
from .tds import TDS, TDSRelease

__all__ = ["Mondrian", "MondrianRelease", "TDS", "TDSRelease", "Anatomy", "AnatomizedRelease",
           "KMinimalGeneralizations", "Negotiation"]

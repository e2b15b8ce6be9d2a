"""What every kubevec package shares: the version, the metadata types and the error tree.

``kubevec.core`` sits below the four parts (``backends``, ``inference``, ``query``, ``controller``) in the
import contracts and imports none of them, so anything here can be used anywhere without a cycle.
"""

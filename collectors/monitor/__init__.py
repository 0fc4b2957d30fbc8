"""z/VM CP monitor records: the record framework, layouts as data, and the two sources.

``monreader[:DEVICE]`` reads the live stream of ``/dev/monreader``; ``monwrite:FILE`` imports a
file written by the CMS MONWRITE utility. Both yield one :class:`Sample` per monitor sample
interval, stamped with the records' own TOD clock. See ``docs/MONITOR.md``.
"""

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Adds fake NVIDIA GPUs to an hwloc XML export of THIS machine, so that the
binding code can run for real on a machine without GPUs: the CPUs and NUMA
nodes stay this machine's, only PCI devices are added.

usage: add_gpus.py IN.xml OUT.xml NGPUS_PER_PACKAGE

Each Package (or the Machine when there is no Package) gets a host bridge
with NGPUS 3D controllers of vendor NVIDIA (class 0x0302, V100 ids), bus ids
in increasing order so that PCI order = package order."""
import sys
import xml.etree.ElementTree as ET


def main():
    src, dst, per = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tree = ET.parse(src)
    root = tree.getroot()
    gp = max(int(o.get("gp_index", "0")) for o in root.iter("object")) + 1
    parents = [o for o in root.iter("object") if o.get("type") == "Package"]
    if not parents:
        parents = [o for o in root.iter("object") if o.get("type") == "Machine"]
    bus = 0x81
    for p in parents:
        br = ET.SubElement(p, "object", {
            "type": "Bridge", "gp_index": str(gp), "bridge_type": "0-1",
            "depth": "0", "bridge_pci": "0000:[%02x-%02x]" % (bus, bus + per - 1)})
        gp += 1
        for i in range(per):
            ET.SubElement(br, "object", {
                "type": "PCIDev", "gp_index": str(gp),
                "pci_busid": "0000:%02x:00.0" % (bus + i),
                "pci_type": "0302 [10de:1db8] [10de:131d] a1",
                "pci_link_speed": "0.000000"})
            gp += 1
        bus += per
    tree.write(dst, xml_declaration=True, encoding="UTF-8")


if __name__ == "__main__":
    main()

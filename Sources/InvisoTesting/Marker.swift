package enum InvisoTestingMarker {}

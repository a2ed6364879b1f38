# tests of codec/

# tests of frame/

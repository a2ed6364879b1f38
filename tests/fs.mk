# tests of fs/

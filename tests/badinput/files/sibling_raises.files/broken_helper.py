raise ImportError('helper needs a GPU')
